"""The README's "Typed results" example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def typed_results_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Typed results", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the Typed results section has no Python example"
    return match.group(1)


def test_the_typed_results_example_runs_as_written(tmp_path: Path) -> None:
    script = tmp_path / "typed_results.py"
    script.write_text(typed_results_example(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"answer":391}\n'
