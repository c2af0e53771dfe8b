"""The `neuron-turn` command run in a child process over the fixture plugin, for CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Final

PLUGINS: Final = "fixture-plugin,state-sqlite,orch-local"


def fixture_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment, the fixture plugin loaded and a state file in `tmp_path`."""
    return {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


def neuron_turn(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `neuron-turn argv...` with no input, waiting at most two minutes."""
    return subprocess.run(
        [sys.executable, "-m", "neuron_turn", *argv],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
