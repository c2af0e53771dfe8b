"""Number arguments a command cannot use are usage errors before anything runs.

`--max-duration nan` or `inf`, a `--max-turns` or `--max-duration` past what a
`TurnConfig` holds, a `ui --port` past 65535 each ended in a traceback once the
command had started; `show --limit 0` or `-1` said no turn was recorded.
"""

from __future__ import annotations

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_OK, EXIT_USAGE

pytestmark = pytest.mark.usefixtures("fixture_plugins")

RUN = ["run", "hi", "--model", "fixture:echo"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([*RUN, "--max-duration", "nan"], "argument --max-duration: must be a finite number"),
        ([*RUN, "--max-duration", "inf"], "argument --max-duration: must be a finite number"),
        ([*RUN, "--max-duration", "1e300"], "argument --max-duration: must be at most"),
        ([*RUN, "--max-turns", str(2**32)], "argument --max-turns: must be at most 4294967295"),
        ([*RUN, "--max-turns", "1" + "0" * 400], "argument --max-turns: must be at most"),
        (
            ["chat", "--model", "fixture:echo", "--max-duration", "nan"],
            "argument --max-duration: must be a finite number",
        ),
        (["show", "--limit", "0"], "argument --limit: must be 1 or more"),
        (["show", "--limit", "-1"], "argument --limit: must be 1 or more"),
        (["ui", "--port", "99999"], "argument --port: a port is 0 to 65535, not 99999"),
        (["ui", "--port", "-5"], "argument --port: must be 0 or more"),
    ],
)
def test_a_number_the_command_cannot_use_is_a_usage_error_naming_it(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_the_largest_limits_a_turn_holds_are_taken(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*RUN, "--max-turns", str(2**32 - 1), "--max-duration", "1e15"]) == EXIT_OK
    assert "echo: hi" in capsys.readouterr().out
