"""The MkDocs hooks that render the CLI reference and the exit codes from the code."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from neuron_turn.cli import _parser
from neuron_turn.cli._errors import _CODES

ROOT = Path(__file__).resolve().parents[1]


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts/docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command_names() -> list[str]:
    actions = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices)


def test_the_cli_reference_holds_the_help_of_every_command() -> None:
    text = _hooks().cli_reference()
    names = _command_names()
    assert {"run", "plugins", "sessions", "history", "worker"} <= set(names)
    for name in names:
        assert f"## `neuron-turn {name}`" in text
        assert f"usage: neuron-turn {name}" in text
    assert text.startswith("```text\nusage: neuron-turn")


def test_the_exit_code_table_has_one_row_per_code() -> None:
    rows = _hooks().exit_codes().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == [str(code) for code, _ in _CODES]


def test_a_page_marker_is_replaced_and_a_lost_one_fails_the_build() -> None:
    hooks = _hooks()
    hooks.on_pre_build(config=None)
    page = hooks.on_page_markdown(f"# Codes\n\n{hooks.EXIT_CODES_MARKER}\n", None, None, None)
    assert hooks.EXIT_CODES_MARKER not in page and "| `0` |" in page
    with pytest.raises(RuntimeError, match="cli-reference"):
        hooks.on_post_build(config=None)
