"""The README's two-agent command, on the embedded local model: the researcher gets 391 back.

The README marks the block not-run for the docs runner and points here: this test
runs the block as written and also checks what it prints, which the runner does not.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.test_docs_examples import example_environment

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _two_agents_command() -> str:
    text = README.read_text(encoding="utf-8")
    after = text.split("`examples/two_agents.py` is the same pair as a script", 1)[1]
    block = re.search(r"```bash\n(.*?)\n```", after, re.S)
    assert block is not None, "the README shows the two-agent command in a bash block"
    return block.group(1)


def test_the_readme_two_agent_command_on_the_local_model_gets_the_calculators_answer(
    tmp_path: Path,
) -> None:
    command = _two_agents_command()
    assert "local:default" in command
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=example_environment(tmp_path),
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    # The child really ran on the model and its answer came back to the parent.
    (answered,) = [line for line in lines if line.startswith("  calculator answered: ")]
    assert "391" in answered, done.stdout
    assert "391" in lines[0], done.stdout
    totals = re.fullmatch(r"  both agents: (\d+) tokens in, (\d+) out, \$0", lines[-1])
    assert totals is not None, done.stdout
    assert int(totals.group(1)) > 0 and int(totals.group(2)) > 0
