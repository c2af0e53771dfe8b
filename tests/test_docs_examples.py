"""Every code example in the project's Markdown runs as written.

The convention (docs/contributing.md says the same for writers):

- A fenced block whose language is ``python`` (or ``py``) or ``bash`` (or
  ``sh``, ``shell``) is an example, and examples run. Any other fence
  (``text``, ``json``, ``toml``, none at all) is output or data and never runs.
- The ``python`` blocks of one page run in order as ONE script, in a fresh
  process, so a later block may use what an earlier one defined. The script
  runs in a temporary directory, with ``.venv/bin`` first on ``PATH``, no
  provider API keys, and ``NEURON_STATE_PATH`` pointing into that directory.
  Tracebacks name the Markdown file and its line numbers.
- Each ``bash`` block runs on its own with ``bash -euo pipefail`` from the
  repository root, in the same environment, and must exit 0.
- A block that must not run is marked by the comment
  ``<!-- not-run: why -->`` on the last non-blank line before its opening
  fence. The reason is required. Blocks that cannot run are not silently
  skipped: an unmarked example that fails fails this test.

Markdown files are found under the repository root (README.md, docs/,
plugins/, bench/...), hidden folders, virtualenvs, node_modules and the
built site excepted, so a page added later is picked up without a change here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PYTHON_LANGUAGES = frozenset({"python", "py"})
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell"})
SKIPPED_FOLDERS = frozenset({"node_modules", "site", "build", "dist"})
TIMEOUT_SECONDS = 300

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run\s*:(?P<reason>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it starts, its language, its code, its marker."""

    path: Path
    line: int  # 1-based line of the first line of code
    language: str
    code: str
    not_run: str | None  # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.not_run is None and self.language in PYTHON_LANGUAGES | SHELL_LANGUAGES


def markdown_files() -> list[Path]:
    """Every Markdown file of the project, in a stable order."""
    found = []
    for path in ROOT.rglob("*.md"):
        parts = path.relative_to(ROOT).parts[:-1]
        if any(
            part.startswith(".") or part in SKIPPED_FOLDERS or part.endswith(".egg-info")
            for part in parts
        ):
            continue
        found.append(path)
    return sorted(found)


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of `path`, with their not-run markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        language = (opening["info"].split() or [""])[0].strip("{}.").lower()
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        if end == len(lines):
            raise AssertionError(f"{path.relative_to(ROOT)}:{index + 1}: unclosed code fence")
        code = "\n".join(line[indent:] for line in lines[index + 1 : end])
        found.append(Block(path, index + 2, language, code + "\n", _marker(lines, index)))
        index = end + 1
    return found


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _marker(lines: list[str], fence_index: int) -> str | None:
    previous = fence_index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    if previous < 0:
        return None
    match = _NOT_RUN.match(lines[previous])
    return None if match is None else match["reason"].strip()


def example_environment(tmp_path: Path) -> dict[str, str]:
    """The environment examples run in: the venv first, no API keys, state in `tmp_path`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith("NEURON_")
    }
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["NEURON_STATE_PATH"] = str(tmp_path / "state.sqlite3")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def page_script(page_blocks: list[Block]) -> str:
    """The page's runnable Python blocks as one script whose line numbers are the page's."""
    script: list[str] = []
    for block in page_blocks:
        script.extend([""] * (block.line - 1 - len(script)))
        script.extend(block.code.splitlines())
    return "\n".join(script) + "\n"


ALL_BLOCKS = [block for path in markdown_files() for block in blocks(path)]
PYTHON_PAGES = sorted(
    {block.path for block in ALL_BLOCKS if block.runs and block.language in PYTHON_LANGUAGES}
)
SHELL_BLOCKS = [block for block in ALL_BLOCKS if block.runs and block.language in SHELL_LANGUAGES]

# Runs the page's script with the Markdown file as its file name, so a
# traceback points at the page's own lines and shows them.
# It runs in the real __main__ module, as `python page.py` would.
_RUNNER = (
    "import sys\n"
    "_path, _source = sys.argv[1], sys.stdin.read()\n"
    "sys.argv = [_path]\n"
    "__file__ = _path\n"
    "del sys\n"
    "exec(compile(_source, _path, 'exec'))\n"
)


def run_page(page: Path, tmp_path: Path, after: str = "") -> subprocess.CompletedProcess[str]:
    """Run the page's Python blocks as one script in `tmp_path`, then `after` in its namespace."""
    page_blocks = [
        block
        for block in ALL_BLOCKS
        if block.path == page and block.runs and block.language in PYTHON_LANGUAGES
    ]
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, str(page)],
        input=page_script(page_blocks) + after,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=example_environment(tmp_path),
        timeout=TIMEOUT_SECONDS,
        check=False,
    )


def _report(result: subprocess.CompletedProcess[str]) -> str:
    return (
        f"exit code {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    )


@pytest.mark.parametrize(
    "page", PYTHON_PAGES, ids=[str(path.relative_to(ROOT)) for path in PYTHON_PAGES]
)
def test_python_examples_of_the_page_run_as_one_script(page: Path, tmp_path: Path) -> None:
    result = run_page(page, tmp_path)
    assert result.returncode == 0, _report(result)


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[block.where for block in SHELL_BLOCKS])
def test_shell_example_runs_from_the_repository_root(block: Block, tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=example_environment(tmp_path),
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert result.returncode == 0, _report(result)


def test_the_project_has_examples_that_run() -> None:
    assert ROOT / "README.md" in PYTHON_PAGES
    assert SHELL_BLOCKS, "no shell example runs at all"


def test_every_not_run_marker_gives_a_reason_and_marks_an_example() -> None:
    wrong = [
        f"{block.where}: " + ("no reason given" if not block.not_run else "not an example")
        for block in ALL_BLOCKS
        if block.not_run is not None
        and (not block.not_run or block.language not in PYTHON_LANGUAGES | SHELL_LANGUAGES)
    ]
    assert not wrong, "bad not-run markers:\n" + "\n".join(wrong)


def test_no_not_run_marker_is_left_without_its_block() -> None:
    stray = []
    for path in markdown_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            if "not-run" not in line or not line.lstrip().startswith("<!--"):
                continue
            following = index + 1
            while following < len(lines) and not lines[following].strip():
                following += 1
            if following == len(lines) or _FENCE.match(lines[following]) is None:
                stray.append(f"{path.relative_to(ROOT)}:{index + 1}")
            elif _NOT_RUN.match(line) is None:
                stray.append(f"{path.relative_to(ROOT)}:{index + 1} (write <!-- not-run: why -->)")
    assert not stray, "not-run markers that mark no code block:\n" + "\n".join(stray)


def test_the_collector_reads_markers_languages_and_indented_fences(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Intro\n"
        "```python\nx = 1\n```\n"
        "<!-- not-run: needs a key -->\n\n"
        "```bash\nexit 1\n```\n"
        "- item\n\n"
        '    ```py title="a.py"\n    y = x + 1\n    ```\n'
        "```\noutput\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.line, b.language, b.code, b.not_run) for b in found] == [
        (3, "python", "x = 1\n", None),
        (8, "bash", "exit 1\n", "needs a key"),
        (13, "py", "y = x + 1\n", None),
        (16, "", "output\n", None),
    ]
    assert [b.runs for b in found] == [True, False, True, False]
    assert page_script([found[0], found[2]]) == "\n\nx = 1\n" + "\n" * 9 + "y = x + 1\n"
