"""A remote MCP call the provider asks about, from the command line: exit 15, then `resume`."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from neuron_turn import Decision, PendingCall
from neuron_turn.cli import main
from neuron_turn.cli._approve import Prompter
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_DECISIONS, EXIT_USAGE
from neuron_turn.plugins import reset_plugin_manager
from tests.loopback import Seen, json_server

PLUGINS = "provider-openai,state-sqlite,orch-local"
DOCS = json.dumps(
    {
        "name": "mcp",
        "label": "docs",
        "url": "https://docs.example.com/mcp",
        "require_approval": ["delete_page"],
    }
)
ASKED = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "server_label": "docs",
    "name": "delete_page",
    "arguments": '{"page": 7}',
}
RAN = {
    "type": "mcp_call",
    "id": "mcp_1",
    "server_label": "docs",
    "name": "delete_page",
    "arguments": '{"page": 7}',
    "output": "deleted",
    "error": None,
    "approval_request_id": "mcpr_1",
}
DONE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Page 7 is gone.", "annotations": []}],
}


def _response(*output: dict[str, Any]) -> dict[str, Any]:
    usage = {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}
    return {
        "id": "resp_1",
        "status": "completed",
        "model": "gpt-5-mini",
        "output": list(output),
        "usage": usage,
    }


@pytest.fixture
def api() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback Responses API: the first call asks about a call, the later ones answer."""
    bodies: list[dict[str, Any]] = []

    def answer(request: Seen) -> tuple[int, Any]:
        bodies.append(request.body)
        return 200, _response(ASKED) if len(bodies) == 1 else _response(RAN, DONE)

    with json_server(answer) as running:
        yield f"{running.url}/v1", bodies


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def _options(base_url: str, grant: str = DOCS) -> list[str]:
    """The turn's options, a `resume` takes too: the model, the API's address, the grant."""
    return [
        *("--model", "openai-responses:gpt-5-mini", "--option", f"base_url={base_url}"),
        *("--hosted-tool", grant),
    ]


def _run(base_url: str, monkeypatch: pytest.MonkeyPatch, grant: str = DOCS) -> int:
    """`run` the turn on session s1 with no terminal to ask at."""
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    return main(["run", "Delete page 7", *_options(base_url, grant), "--session", "s1"])


def _granted(body: dict[str, Any]) -> dict[str, Any]:
    """The `mcp` tool entry of a request body."""
    (granted,) = [tool for tool in body["tools"] if tool["type"] == "mcp"]
    return granted


def test_run_pauses_on_the_request_and_resume_sends_the_approval(
    api: tuple[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base_url, bodies = api

    assert _run(base_url, monkeypatch) == EXIT_AWAITING_APPROVAL
    err = capsys.readouterr().err
    assert "mcpr_1" in err and "delete_page" in err
    assert "neuron-turn resume s1 --approve hosted:mcpr_1" in err
    assert '"require_approval": ["delete_page"]' in err  # the printed command grants it again
    assert "the provider runs it as asked" in err and "--input" not in err  # no edit offered
    assert _granted(bodies[0])["require_approval"] == {"always": {"tool_names": ["delete_page"]}}

    assert main(["resume", "s1", "--approve", "hosted:mcpr_1", *_options(base_url)]) == 0
    assert "Page 7 is gone." in capsys.readouterr().out
    assert bodies[1]["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": True,
    }


def test_an_edited_input_for_a_hosted_call_exits_with_the_decisions_code_and_runs_nothing(
    api: tuple[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base_url, bodies = api
    assert _run(base_url, monkeypatch) == EXIT_AWAITING_APPROVAL
    capsys.readouterr()

    edited = ["resume", "s1", "--approve", "hosted:mcpr_1", "--input", '{"page": 8}']
    assert main([*edited, *_options(base_url)]) == EXIT_DECISIONS
    assert "without an edited input" in capsys.readouterr().err
    assert len(bodies) == 1


HOSTED = PendingCall(
    id="hosted:mcpr_1",
    name="mcp",
    input={"server": "docs", "tool": "delete_page", "arguments": {"page": 7}},
    hosted=True,
)


def _prompter(answers: list[str]) -> tuple[Prompter, io.StringIO]:
    given = iter(answers)

    async def lines() -> str | None:
        return next(given, None)

    err = io.StringIO()
    return Prompter(io.StringIO(), err, lines=lines), err


async def test_the_prompt_offers_a_hosted_call_yes_or_no_only() -> None:
    prompter, err = _prompter(["edit", "always", "y"])

    assert await prompter("s1", [HOSTED], None) == [Decision.approve("hosted:mcpr_1")]
    shown = err.getvalue()
    assert "let the provider run it? [y]es / [n]o: " in shown
    assert shown.count("answer y or n") == 2
    assert "a remote MCP server's call: approved, the provider runs it as asked" in shown


async def test_a_hosted_call_denied_at_the_prompt_carries_the_reason() -> None:
    prompter, _ = _prompter(["n", "keep the page"])

    assert await prompter("s1", [HOSTED], None) == [Decision.deny("hosted:mcpr_1", "keep the page")]


TOKEN = "mcp-bearer-from-env-7f3cSECRET"
WITH_TOKEN = json.dumps({**json.loads(DOCS), "authorization_env": "DOCS_MCP_TOKEN"})


def test_a_servers_token_comes_from_the_variable_named_and_is_never_printed(
    api: tuple[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base_url, bodies = api
    monkeypatch.setenv("DOCS_MCP_TOKEN", TOKEN)

    assert _run(base_url, monkeypatch, WITH_TOKEN) == EXIT_AWAITING_APPROVAL

    assert _granted(bodies[0])["authorization"] == TOKEN
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    # The printed resume command names the variable again, not the token.
    assert '"authorization_env": "DOCS_MCP_TOKEN"' in captured.err


@pytest.mark.parametrize(
    ("grant", "says"),
    [
        (WITH_TOKEN, "the environment variable DOCS_MCP_TOKEN (the token of the MCP server"),
        ('{"name": "web_search", "authorization_env": "X"}', "not web_search"),
        (WITH_TOKEN.replace('"DOCS_MCP_TOKEN"', "3"), "the name of an environment variable"),
    ],
)
def test_a_token_variable_not_set_or_misplaced_is_a_usage_error_before_any_call(
    api: tuple[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    grant: str,
    says: str,
) -> None:
    base_url, bodies = api
    monkeypatch.delenv("DOCS_MCP_TOKEN", raising=False)

    with pytest.raises(SystemExit) as exited:
        _run(base_url, monkeypatch, grant)

    assert exited.value.code == EXIT_USAGE
    assert says in capsys.readouterr().err
    assert bodies == []


def test_a_servers_token_never_goes_into_a_sandboxs_recipe(
    api: tuple[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, bodies = api
    monkeypatch.setenv("DOCS_MCP_TOKEN", TOKEN)
    model = ["--model", "openai-responses:gpt-5-mini"]
    argv = ["run", "hi", *model, "--hosted-tool", WITH_TOKEN, "--environment", "process"]

    assert main(argv) == EXIT_USAGE

    err = capsys.readouterr().err
    assert "--environment: a remote MCP server's token (authorization_env) never goes" in err
    assert TOKEN not in err and bodies == []
