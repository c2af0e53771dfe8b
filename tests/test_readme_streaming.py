"""The README's streaming example runs as written and prints what the README says."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _streaming_example() -> str:
    section = README.read_text().split("## Streaming", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the streaming section has one Python example"
    return str(blocks[0])


async def test_the_streaming_example_prints_the_answer_piece_by_piece() -> None:
    # Like the README's other examples it awaits at top level, as in an async REPL.
    code = compile(_streaming_example(), "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = eval(code, {"__name__": "readme"})
        if asyncio.iscoroutine(result):
            await result
    assert printed.getvalue() == "Stream|ed, pi|ece by| piece|.| (0 tokens out)\ncomplete\n"
