"""`--option KEY=VALUE` and the vendors' `*_BASE_URL` variables, against a loopback server.

The server speaks each vendor's wire format (OpenAI Chat Completions,
Anthropic Messages) well enough for one answer, and records what it was sent.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from neuron_turn.cli import _add_run_options, _parser, main
from neuron_turn.cli._approve import resume_options
from neuron_turn.plugins import reset_plugin_manager
from tests.loopback import Seen, Server, json_server

PLUGINS = "provider-openai,provider-anthropic,state-sqlite,orch-local"
ANSWER = "hello from loopback"

OPENAI_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "served-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": ANSWER},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}
ANTHROPIC_BODY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": ANSWER}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 3},
}


def _known(request: Seen) -> tuple[int, Any]:
    known = {"/v1/chat/completions": OPENAI_BODY, "/v1/messages": ANTHROPIC_BODY}
    answer = known.get(request.path)
    return (200, answer) if answer else (404, {"error": {"message": "no such path"}})


@pytest.fixture
def server() -> Iterator[Server]:
    """A loopback OpenAI and Anthropic API, answering each path's one reply."""
    with json_server(_known) as running:
        yield running


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_option_base_url_reaches_an_openai_compatible_server(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "hi", "--model", "openai:served-model"]
    assert main([*argv, "--option", f"base_url={server.url}/v1", "--option", "timeout=30"]) == 0
    out, err = capsys.readouterr()
    assert out == ANSWER + "\n", err
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "served-model"
    assert request.body["messages"][-1] == {"role": "user", "content": "hi"}
    # A compatible server needs no key: none is sent, none was asked for.
    assert "authorization" not in request.headers


def test_openai_base_url_is_read_as_openais_sdk_reads_it(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    # No --model: the key chooses openai, the variable where it is.
    assert main(["run", "hi"]) == 0
    out, err = capsys.readouterr()
    assert out == ANSWER + "\n"
    assert "using openai:gpt-4o-mini (OPENAI_API_KEY is set)" in err
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-loopback"


def test_anthropic_base_url_is_read_as_anthropics_sdk_reads_it(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    assert main(["run", "hi", "--model", "anthropic:claude-haiku-4-5"]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-loopback"
    text = {"type": "text", "text": "hi"}
    assert request.body["messages"] == [{"role": "user", "content": [text]}]


def test_option_wins_over_the_environment(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/nowhere")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    model = ["--model", "anthropic:claude-haiku-4-5"]
    argv = ["run", "hi", *model, "--option", f"base_url={server.url}"]
    assert main(argv) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    assert [request.path for request in server.requests] == ["/v1/messages"]


def test_an_option_that_is_not_key_value_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "openai:m", "--option", "base_url"])
    assert exited.value.code == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_an_option_the_provider_does_not_take_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", "--model", "openai:m", "--option", "colour=blue"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("neuron-turn: error: ") and "colour" in err


def on_anthropic(server: Server) -> list[str]:
    """`run hi` against the loopback server as Anthropic's API."""
    return [
        "run",
        "hi",
        "--model",
        "anthropic:claude-haiku-4-5",
        "--option",
        f"base_url={server.url}",
    ]


def test_hosted_tool_reaches_anthropic_as_its_server_tools(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    argv = on_anthropic(server)
    hosted = ["--hosted-tool", "web_search", "--hosted-tool", "code_execution"]
    assert main([*argv, *hosted, "--hosted-tool", "web_search"]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    assert [tool["name"] for tool in request.body["tools"]][-2:] == ["web_search", "code_execution"]
    assert request.headers["anthropic-beta"] == "code-execution-2025-08-25"


def test_a_hosted_tools_limits_given_as_json_reach_the_api(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    argv = on_anthropic(server)
    fetch = '{"name": "web_fetch", "max_uses": 2, "allowed_domains": ["docs.python.org"]}'
    assert main([*argv, "--hosted-tool", fetch, "--hosted-tool", fetch]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    tool = request.body["tools"][-1]
    assert (tool["name"], tool["max_uses"], tool["allowed_domains"]) == (
        "web_fetch",
        2,
        ["docs.python.org"],
    )


def test_two_remote_mcp_servers_given_as_json_reach_anthropics_connector(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    docs = '{"name": "mcp", "label": "docs", "url": "https://mcp.example.com/docs"}'
    wiki = (
        '{"name": "mcp", "label": "wiki", "url": "https://mcp.example.com/wiki", '
        '"allowed_tools": ["ask"]}'
    )
    assert main([*on_anthropic(server), "--hosted-tool", docs, "--hosted-tool", wiki]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    assert [(s["name"], s["url"]) for s in request.body["mcp_servers"]] == [
        ("docs", "https://mcp.example.com/docs"),
        ("wiki", "https://mcp.example.com/wiki"),
    ]
    assert "mcp-client-2025-11-20" in request.headers["anthropic-beta"]


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("web_browse", "unknown hosted tool 'web_browse' (choose from web_search, web_fetch"),
        ('{"name": "web_search", "max_uses": 0}', "WebSearch.max_uses must be an int of 1 or more"),
        ('{"name": "web_fetch", "allowed_domains": ["https://a.com"]}', "is not a domain"),
        ('{"name": "code_execution", "max_uses": 1}', "has no field 'max_uses'"),
        ('{"name": "web_search",', "not a JSON object"),
        ("mcp", "hosted tool mcp needs label and url"),
        ('{"name": "mcp", "label": "d", "url": "http://a.com"}', "the server's https:// address"),
    ],
)
def test_a_malformed_hosted_tool_is_a_usage_error_naming_what_is_wrong(
    given: str, named: str, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = on_anthropic(server)
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--hosted-tool", given])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --hosted-tool" in err and named in err
    assert server.requests == []


def test_one_hosted_tool_with_two_sets_of_limits_is_refused(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = on_anthropic(server)
    capped = '{"name": "web_search", "max_uses": 1}'
    assert main([*argv, "--hosted-tool", "web_search", "--hosted-tool", capped]) == 2
    assert capsys.readouterr().err == (
        "neuron-turn: error: --hosted-tool: web_search given twice with different limits; "
        "give it once\n"
    )
    assert server.requests == []


def test_a_hosted_tool_the_provider_does_not_run_is_a_usage_error_before_any_call(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "hi", "--model", "openai:served-model", "--option", f"base_url={server.url}/v1"]
    assert main([*argv, "--hosted-tool", "web_search"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "neuron-turn: error: --hosted-tool: the provider OpenAIProvider does not run the "
        "hosted tool(s) web_search (it runs: none); choose a --model whose provider runs it\n"
    )
    assert server.requests == []


def test_a_missing_key_names_the_variable_the_provider_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", "--model", "openai-responses:gpt-5-mini"]) == 5
    err = capsys.readouterr().err
    assert "(e.g. OPENAI_API_KEY)" in err and "OPENAI_RESPONSES_API_KEY" not in err


def test_the_printed_resume_command_grants_the_same_hosted_tools() -> None:
    fetch = '{"name": "web_fetch", "max_uses": 2, "allowed_domains": ["docs.python.org"]}'
    argv = ["run", "hi", "--hosted-tool", "web_search", "--hosted-tool", fetch]
    args = _parser().parse_args(argv)
    scratch = argparse.ArgumentParser(add_help=False)
    _add_run_options(scratch)
    words = resume_options(args, scratch, None)
    assert words == ["--hosted-tool", "web_search", "--hosted-tool", fetch]
    again = _parser().parse_args(["resume", "s1", "--approve", "c1", *words])
    assert again.hosted_tool == args.hosted_tool


@pytest.mark.parametrize(("given", "level"), [("on", True), ("off", False), ("high", "high")])
def test_thinking_reaches_the_turn_and_the_printed_resume_command(
    given: str, level: object
) -> None:
    args = _parser().parse_args(["run", "hi", "--thinking", given, "--mcp-sampling"])
    assert args.thinking == level
    scratch = argparse.ArgumentParser(add_help=False)
    _add_run_options(scratch)
    assert resume_options(args, scratch, None) == ["--mcp-sampling", "--thinking", given]


def test_a_thinking_level_that_is_not_one_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(["run", "hi", "--thinking", "max"])
    assert exited.value.code == 2
    assert (
        "choose from on, off, minimal, low, medium, high, xhigh; got 'max'"
        in capsys.readouterr().err
    )


def test_thinking_over_a_provider_that_does_not_take_it_is_a_usage_error_before_any_call(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS + ",provider-local")
    reset_plugin_manager()
    argv = ["run", "hi", "--model", "local:qwen", "--option", f"base_url={server.url}/v1"]
    assert main([*argv, "--thinking", "low"]) == 2
    assert "--thinking: the provider LocalProvider does not take a thinking setting" in (
        capsys.readouterr().err
    )
    assert server.requests == []


def test_thinking_for_a_groq_model_that_cannot_reason_is_refused_before_any_call(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-loopback")
    argv = ["run", "hi", "--model", "groq:llama-3.3-70b", "--option", f"base_url={server.url}/v1"]
    code = main([*argv, "--thinking", "low"])
    err = capsys.readouterr().err
    assert code not in (0, 2)
    assert "llama-3.3-70b takes no thinking setting (Groq reasons with Qwen 3" in err
    assert "retry" not in err.lower()
    assert server.requests == []


def test_thinking_reaches_anthropic_as_a_thinking_budget(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    argv = on_anthropic(server)
    assert main([*argv, "--thinking", "low"]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
