"""The `resume` command a paused or failed run prints carries `--option` as it was given.

Written back as Python printed the parsed pair (`--option "('prefix', 'x')"`), the
command was refused as a usage error; a provider option naming a secret
(`--option api_key=...`) is not repeated on stderr, where logs keep it. And an
approval's `edit` whose editor fails in any way leaves the call as it was.
"""

from __future__ import annotations

import argparse
import io
import shlex

import pytest

from neuron_turn.cli import _add_run_options, main
from neuron_turn.cli._approve import HIDDEN_VALUE, Prompter, resume_options
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_OK
from neuron_turn.loop.approval import PendingCall

pytestmark = pytest.mark.usefixtures("fixture_plugins")


def _options(*argv: str) -> list[str]:
    parser = argparse.ArgumentParser(add_help=False)
    _add_run_options(parser)
    return resume_options(parser.parse_args(list(argv)), parser, None)


def test_the_printed_resume_command_with_an_option_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    held = ["--model", "fixture:big-sum", "--tool", "fixture_add", "--option", "prefix=x"]
    assert main(["run", "add", *held, "--session", "o1"]) == EXIT_AWAITING_APPROVAL
    err = capsys.readouterr().err
    approve = next(line for line in err.splitlines() if line.startswith("  approve: "))
    command = shlex.split(approve.removeprefix("  approve: "))
    assert command[command.index("--option") + 1] == "prefix=x"

    assert main(command[1:]) == EXIT_OK
    assert "the sum is 1001" in capsys.readouterr().out


@pytest.mark.parametrize(
    "given",
    ["timeout=30", "stream=true", 'name="30"', "base_url=http://127.0.0.1:8000/v1", "x=a b"],
)
def test_an_option_is_written_back_as_text_that_parses_to_the_same_value(given: str) -> None:
    words = _options("--option", given)
    assert words[0] == "--option"
    parser = argparse.ArgumentParser(add_help=False)
    _add_run_options(parser)
    again = parser.parse_args(words).option
    assert again == parser.parse_args(["--option", given]).option


def test_a_provider_option_naming_a_secret_is_not_repeated() -> None:
    words = _options("--option", "api_key=sk-live-123", "--option", "auth_token=t0k")
    assert "sk-live-123" not in " ".join(words) and "t0k" not in " ".join(words)
    hidden = [f"api_key={HIDDEN_VALUE}", f"auth_token={HIDDEN_VALUE}"]
    assert words == ["--option", hidden[0], "--option", hidden[1]]


def test_a_urls_password_and_secret_query_values_are_not_repeated() -> None:
    words = _options(
        "--option",
        "base_url=https://me:pa55@proxy.example/v1?api_key=k3y&region=eu",
        "--mcp-url",
        "https://me:t0k@mcp.example/mcp?token=t0k2",
    )
    said = " ".join(words)
    assert not any(secret in said for secret in ("pa55", "k3y", "t0k"))
    assert "base_url=https://me:***@proxy.example/v1?api_key=***&region=eu" in words
    assert "https://me:***@mcp.example/mcp?token=***" in words


def test_a_hosted_mcp_servers_url_password_is_not_repeated() -> None:
    granted = '{"name": "mcp", "label": "docs", "url": "https://me:s3cr3t@docs.example/mcp"}'
    words = _options("--hosted-tool", granted)
    said = " ".join(words)
    assert "s3cr3t" not in said and "https://me:***@docs.example/mcp" in said


@pytest.mark.parametrize(
    "editor",
    ["sh -c 'rm \"$0\"'", 'sh -c \'printf "\\377" > "$0"\'', "vim 'unbalanced"],
    ids=["removes-the-file", "saves-latin1", "unbalanced-quotes"],
)
async def test_an_editor_that_fails_leaves_the_call_unchanged_and_asks_again(editor: str) -> None:
    err = io.StringIO()
    answers = iter(["e", "y"])

    async def lines() -> str | None:
        return next(answers, None)

    prompter = Prompter(io.StringIO(), err, environ={"EDITOR": editor}, lines=lines)
    call = PendingCall(id="c1", name="fixture_add", input={"a": 1, "b": 2})
    decisions = await prompter("s", [call], None)
    assert decisions is not None
    assert [(d.id, d.decision, d.input) for d in decisions] == [("c1", "approve", None)]
    assert "failed; the call is unchanged" in err.getvalue()
