"""`--state postgresql://...` and `$NEURON_STATE_URL`: the commands on a PostgreSQL database."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pydantic import JsonValue

from layer0 import HISTORY_KEY, SessionScope
from neuron_state_postgres import PostgresStore
from neuron_turn.cli._errors import EXIT_PLUGIN, EXIT_STATE, EXIT_USAGE
from neuron_turn.cli._state_option import shown_state

from ..plugins.state_postgres._server import Server, postgres_server

__all__ = ["postgres_server"]

PLUGINS = "fixture-plugin,provider-local,state-sqlite,state-postgres,orch-local"


@pytest.fixture
def database_url(postgres_server: Server) -> Iterator[str]:
    """A database of the test's own (the command line always uses the schema `neuron`)."""
    name = f"cli_{uuid.uuid4().hex}"
    with psycopg.connect(postgres_server.conninfo(), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    yield postgres_server.conninfo().rsplit("/", 1)[0] + f"/{name}"


def cli(*argv: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith("NEURON_")
    }
    environment |= {
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "unused.db"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "neuron_turn", *argv],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def read_back(url: str, session: str) -> tuple[JsonValue, list[str]]:
    """The session's history and its turns' titles, read by a store of this process."""

    async def read() -> tuple[JsonValue, list[str]]:
        async with PostgresStore(url) as store:
            history = await store.read(SessionScope(id=session), HISTORY_KEY)
            titles = [s.title for s in await store.turn_summaries(session=session)]
        return history, titles

    return asyncio.run(read())


def test_run_with_the_local_model_keeps_the_session_in_the_database(
    database_url: str, tmp_path: Path
) -> None:
    ran = cli(
        "run", "Say hello in one word.", "--session", "pg", "--max-output-tokens", "16",
        "--state", database_url, tmp_path=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "using local:default" in ran.stderr
    history, titles = read_back(database_url, "pg")
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant"]  # type: ignore[index,call-overload]
    assert titles == ["Say hello in one word."]
    assert not (tmp_path / "unused.db").exists()


def test_a_session_goes_on_across_runs_and_reads_back_through_neuron_state_url(
    database_url: str, tmp_path: Path
) -> None:
    for text in ("first", "second"):
        ran = cli(
            "run", text, "--model", "fixture:echo", "--session", "s", tmp_path=tmp_path,
            NEURON_STATE_URL=database_url,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    history, titles = read_back(database_url, "s")
    assert isinstance(history, list) and len(history) == 4
    assert titles == ["second", "first"]
    listed = cli("sessions", "--state", database_url, tmp_path=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "s" in listed.stdout.split()
    assert not (tmp_path / "unused.db").exists()


def test_a_wrong_password_exits_with_the_state_code_naming_the_server_not_the_password(
    postgres_server: Server, tmp_path: Path
) -> None:
    wrong = "N0t-the-pa55word"
    ran = cli(
        "run", "hi", "--model", "fixture:echo", "--state",
        postgres_server.conninfo(password=wrong), tmp_path=tmp_path,
    )  # fmt: skip
    assert ran.returncode == EXIT_STATE, ran.stderr
    assert f"neuron@127.0.0.1:{postgres_server.port}/postgres" in ran.stderr
    assert "password authentication failed" in ran.stderr
    assert "$NEURON_STATE_URL" in ran.stderr
    assert wrong not in ran.stderr + ran.stdout


def test_a_url_without_the_plugin_says_to_install_it_with_the_plugin_code(
    postgres_server: Server, tmp_path: Path
) -> None:
    ran = cli(
        "run", "hi", "--model", "fixture:echo", "--state", postgres_server.conninfo(),
        tmp_path=tmp_path, NEURON_LOAD_PLUGINS="fixture-plugin,state-sqlite,orch-local",
    )  # fmt: skip
    assert ran.returncode == EXIT_PLUGIN, ran.stderr
    assert "install neuron-state-postgres" in ran.stderr
    assert f"neuron:***@127.0.0.1:{postgres_server.port}" in ran.stderr
    assert postgres_server.password not in ran.stderr + ran.stdout


def test_neuron_state_url_that_is_not_a_database_url_is_a_usage_error_without_its_password(
    tmp_path: Path,
) -> None:
    ran = cli(
        "sessions", tmp_path=tmp_path, NEURON_STATE_URL="mysql://me:Secret-Pw@host/db",
    )  # fmt: skip
    assert ran.returncode == EXIT_USAGE, ran.stderr
    assert "NEURON_STATE_URL must be a postgresql://" in ran.stderr
    assert "Secret-Pw" not in ran.stderr


def test_shown_state_hides_the_password_of_a_url_and_leaves_a_path() -> None:
    assert shown_state("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert shown_state("postgres://h/db?password=pw&x=1") == "postgres://h/db?password=***&x=1"
    assert shown_state("/tmp/state.db") == "/tmp/state.db"


def test_a_reading_command_on_a_fresh_database_lists_nothing_and_creates_nothing(
    database_url: str, tmp_path: Path
) -> None:
    done = cli("sessions", "--state", database_url, tmp_path=tmp_path)

    assert done.returncode == 0, done.stderr
    with psycopg.connect(database_url) as connection:
        found = connection.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'neuron'")
        assert found.fetchone() == (0,)
