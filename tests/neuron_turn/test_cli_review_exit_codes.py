"""The exit-code table (`--help`, docs/reference/exit-codes.md) names each command using a code.

The table is generated from `cli._errors._CODES`: a command exiting with a code its
row does not name leaves a script's author nothing to look it up by.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import _CODES, EXIT_AWAITING_APPROVAL, EXIT_NOT_FOUND

pytestmark = pytest.mark.usefixtures("fixture_plugins")

MEANING = dict(_CODES)


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "nope"],
        ["revoke", "nope", "fixture_add"],
        ["forget", "nope", "--yes"],
        ["fork", "nope"],
        ["restore", "missing.json"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_command_finding_nothing_exits_with_the_code_whose_row_names_it(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_NOT_FOUND
    assert f"{argv[0]}:" in MEANING[EXIT_NOT_FOUND]


def test_a_fork_at_a_turn_that_waits_exits_with_the_code_whose_row_names_it() -> None:
    held = ["--model", "fixture:big-sum", "--tool", "fixture_add", "--session", "w"]
    assert main(["run", "add", *held]) == EXIT_AWAITING_APPROVAL
    assert main(["fork", "w"]) == EXIT_AWAITING_APPROVAL
    assert "fork:" in MEANING[EXIT_AWAITING_APPROVAL]
