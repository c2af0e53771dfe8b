"""The README's streaming example prints what the README says it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _streaming_example() -> str:
    section = README.read_text().split("## Streaming", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the streaming section has one Python example"
    return str(blocks[0])


def test_the_streaming_example_prints_the_answer_piece_by_piece() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _streaming_example()], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Stream|ed, pi|ece by| piece|.| (0 tokens out)\ncomplete\n"
