"""`neuron-turn ui`'s own token from the environment: out of the process list, as JUPYTER_TOKEN.

A loopback port is reachable by every local user, and so is every process's
command line (`ps`, /proc/PID/cmdline): a token given as `--token` was theirs
to read. `NEURON_UI_TOKEN` is read by the process only (its environment is
its owner's to read).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Final

import httpx

from .conftest import PLUGINS

_TOKEN: Final = "own-token-0123456789abcdef"


def _ui(state: Path, cwd: Path, *extra: str) -> subprocess.Popen[str]:
    environment = os.environ | {"NEURON_LOAD_PLUGINS": PLUGINS, "NEURON_UI_TOKEN": _TOKEN}
    return subprocess.Popen(
        [sys.executable, "-m", "neuron_turn", "ui", "--state", str(state), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=cwd,
    )


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    return stderr


def test_the_token_comes_from_neuron_ui_token_and_stays_out_of_the_process_list(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state.db"
    process = _ui(state, tmp_path)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([\w.~-]+)", line)
        assert found is not None, line
        assert found.group(2) == _TOKEN
        command_line = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert _TOKEN.encode() not in command_line
        page = httpx.get(f"{found.group(1)}/", headers={"Authorization": f"Bearer {_TOKEN}"})
        assert page.status_code == 200
    finally:
        _stop(process)


def test_a_bad_token_in_the_environment_is_refused_naming_the_variable(tmp_path: Path) -> None:
    environment = os.environ | {"NEURON_LOAD_PLUGINS": PLUGINS, "NEURON_UI_TOKEN": "short"}
    done = subprocess.run(
        [sys.executable, "-m", "neuron_turn", "ui", "--state", str(tmp_path / "state.db")],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "NEURON_UI_TOKEN" in done.stderr and "at least 16 characters" in done.stderr
