"""JSON given on the command line nested deeper than Python's parser follows is a usage error.

`[[[[...` past about a thousand levels raised `RecursionError` out of the parser,
a traceback for `--option`, `--context-option`, `--hosted-tool`, `--output-schema`,
`resume --input` and `--answer`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_USAGE

pytestmark = pytest.mark.usefixtures("fixture_plugins")

DEEP = "[" * 100_000
RUN = ["run", "hi", "--model", "fixture:echo"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([*RUN, "--option", f"x={DEEP}"], "argument --option: x: JSON nested too deeply"),
        ([*RUN, "--context-option", f"x={DEEP}"], "argument --context-option: x: JSON nested"),
        ([*RUN, "--hosted-tool", '{"a": ' + DEEP], "argument --hosted-tool: not a JSON object"),
        (["resume", "s", "--approve", "c", "--input", DEEP], "argument --input: not JSON"),
        (["resume", "s", "--answer", "c", DEEP], "--answer c: the result is not JSON"),
    ],
    ids=["option", "context-option", "hosted-tool", "input", "answer"],
)
def test_json_nested_too_deeply_is_a_usage_error_naming_the_argument(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_schema_file_nested_too_deeply_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "deep.json"
    schema.write_text(DEEP)
    with pytest.raises(SystemExit) as exited:
        main([*RUN, "--output-schema", str(schema)])
    assert exited.value.code == EXIT_USAGE
    assert f"{str(schema)!r} is not JSON: JSON nested too deeply to read" in (
        capsys.readouterr().err
    )
