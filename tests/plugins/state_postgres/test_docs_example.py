"""docs/how-to/postgres.md: its Python example runs as written against a real server.

The docs test (tests/test_docs_examples.py) has no server, so the page marks the
block not-run and this test runs it, the same way, with `$NEURON_STATE_URL` set.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

from tests.test_docs_examples import _RUNNER, ROOT, blocks, example_environment, page_script

from ._server import Server

PAGE = ROOT / "docs" / "how-to" / "postgres.md"


def test_the_pages_python_example_runs_on_a_real_server(
    postgres_server: Server, tmp_path: Path
) -> None:
    name = f"docs_{uuid.uuid4().hex}"
    with psycopg.connect(postgres_server.conninfo(), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    url = postgres_server.conninfo().rsplit("/", 1)[0] + f"/{name}"
    python = [block for block in blocks(PAGE) if block.language == "python"]
    assert python, "the page has a Python example"
    result = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(PAGE)],
        input=page_script(python),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=example_environment(tmp_path) | {"NEURON_STATE_URL": url},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    shown = [block.code for block in blocks(PAGE) if block.language == "text"]
    assert result.stdout in shown, "the page shows what the example prints"
