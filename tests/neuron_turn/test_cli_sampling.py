"""`--temperature`, `--top-p`, `--top-k`, `--seed` and `--stop` on the command line, against
loopback APIs: sent in each API's fields, refused before any call where they cannot go."""

from __future__ import annotations

import pytest

from neuron_turn.cli import main

from .test_cli_provider_options import ANSWER, Server, on_anthropic, plugins, server

__all__ = ["plugins", "server"]  # the fixtures, used by name


def on_openai(server: Server) -> list[str]:
    return ["run", "hi", "--model", "openai:served-model", "--option", f"base_url={server.url}/v1"]


def test_the_flags_reach_an_openai_compatible_api_in_its_fields(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [
        "--temperature",
        "0.2",
        "--top-p",
        "0.9",
        "--seed",
        "7",
        "--stop",
        "END",
        "--stop",
        "##",
    ]
    assert main([*on_openai(server), *flags]) == 0
    assert capsys.readouterr().out == ANSWER + "\n"
    [request] = server.requests
    body = request.body
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.2, 0.9, 7)
    assert body["stop"] == ["END", "##"]


def test_top_k_and_stop_reach_anthropic_as_its_fields(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    assert main([*on_anthropic(server), "--top-k", "20", "--stop", "END"]) == 0
    [request] = server.requests
    assert (request.body["top_k"], request.body["stop_sequences"]) == (20, ["END"])


def test_a_setting_the_provider_does_not_take_is_a_usage_error_before_any_call(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    assert main([*on_anthropic(server), "--seed", "7"]) == 2
    err = capsys.readouterr().err
    assert "--top-p/--top-k/--seed/--stop: the provider AnthropicProvider does not take" in err
    assert "seed" in err and server.requests == []


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--top-p", "1.5"], "--top-p: sampling top_p must be a number above 0 and at most 1"),
        (["--top-k", "0"], "--top-k: sampling top_k must be a whole number, 1 or more"),
        (["--stop", ""], "--stop: sampling stop_sequences must be a sequence of non-empty"),
        (["--temperature", "-1"], "--temperature must be a number 0 or more; got -1.0"),
        (["--temperature", "nan"], "--temperature must be a number 0 or more; got nan"),
    ],
)
def test_a_value_no_api_takes_is_a_usage_error_naming_the_flag(
    server: Server, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    assert main([*on_openai(server), *flags]) == 2
    assert named in capsys.readouterr().err
    assert server.requests == []
