"""`neuron-turn plugins`, the parser and `--help`, run in-process against fake entry points."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from neuron_turn import hookimpl
from neuron_turn.cli import main
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TextPart
from neuron_turn.plugins import reset_plugin_manager

from .plugin_fakes import FakeEntryPoint, clear_plugin_env, install_entry_points


class Echo:
    def __init__(self, model: str) -> None:
        self.model = model

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return ProviderResponse(content=[TextPart(self.model)], stop_reason="end_turn")


def provider_plugin(*names: str) -> object:
    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            for name in names:
                register(name, Echo)

    return Plugin()


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    clear_plugin_env(monkeypatch)
    reset_plugin_manager()
    yield lambda *eps: install_entry_points(monkeypatch, *eps)
    reset_plugin_manager()


def some_plugins() -> tuple[FakeEntryPoint, ...]:
    return (
        FakeEntryPoint("provider-echo", provider_plugin("echo", "shared"), version="0.2.0"),
        FakeEntryPoint("provider-other", provider_plugin("shared")),
        FakeEntryPoint("provider-broken", ModuleNotFoundError("No module named 'sdk'")),
    )


def test_plugins_lists_each_plugin_then_failures_and_conflicts(
    install: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    install(*some_plugins())
    # No warning escapes (pytest turns warnings into errors): the listing shows failures.
    assert main(["plugins"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == [
        "builtin (neuron-turn 0.1.0)",
        "  implements: register_context_strategies",
        "  context strategies: sliding_window, none",
        "provider-echo (neuron-provider-echo 0.2.0)",
        "  entry point: provider-echo = neuron_provider_echo.plugin",
        "  implements: register_providers",
        "  providers: echo, shared",
        "provider-other (neuron-provider-other 1.0.0)",
        "  entry point: provider-other = neuron_provider_other.plugin",
        "  implements: register_providers",
        "  providers: shared",
        "",
        "1 plugin(s) failed to load:",
        "  Plugin 'provider-broken' (neuron-provider-broken 1.0.0, entry point neuron_turn: "
        "provider-broken = neuron_provider_broken.plugin) failed to load: "
        "ModuleNotFoundError: No module named 'sdk'",
        "",
        "Conflicts (looking these names up fails):",
        "  provider 'shared' is registered by more than one plugin: 'provider-echo' "
        "(neuron-provider-echo 0.2.0) and 'provider-other' (neuron-provider-other 1.0.0); "
        "uninstall one, or disable it with NEURON_DISABLE_PLUGINS=<plugin>",
    ]


def test_plugins_names_the_ones_settings_left_out(
    install: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NEURON_DISABLE_PLUGINS", "provider-other,provider-broken")
    install(*some_plugins())
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == (
        "Not loaded (NEURON_LOAD_PLUGINS / NEURON_DISABLE_PLUGINS): "
        "'provider-broken' (neuron-provider-broken 1.0.0), "
        "'provider-other' (neuron-provider-other 1.0.0)"
    )
    assert "failed to load" not in out


def test_plugins_json(install: Callable[..., None], capsys: pytest.CaptureFixture[str]) -> None:
    install(*some_plugins())
    assert main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in listing["plugins"]] == ["builtin", "provider-echo", "provider-other"]
    echo = listing["plugins"][1]
    assert echo == {
        "name": "provider-echo",
        "distribution": "neuron-provider-echo",
        "version": "0.2.0",
        "entry_point": "neuron_provider_echo.plugin",
        "hooks": ["register_providers"],
        "registered": {
            "providers": ["echo", "shared"],
            "context_strategies": [],
            "state_stores": [],
            "orchestrators": [],
            "workers": [],
            "environments": [],
            "hooks": [],
            "tools": [],
            "approval_policies": [],
            "guardrails": [],
            "output_validators": [],
            "output_types": [],
        },
    }
    (failure,) = listing["failures"]
    assert failure["name"] == "provider-broken"
    assert failure["distribution"] == "neuron-provider-broken"
    assert failure["version"] == "1.0.0"
    assert failure["entry_point"] == "neuron_provider_broken.plugin"
    assert (failure["stage"], failure["error_type"]) == ("import", "ModuleNotFoundError")
    assert failure["error"] == "No module named 'sdk'"
    assert listing["conflicts"] == [
        {
            "kind": "provider",
            "name": "shared",
            "plugins": [
                "'provider-echo' (neuron-provider-echo 0.2.0)",
                "'provider-other' (neuron-provider-other 1.0.0)",
            ],
        }
    ]
    assert listing["disabled"] == []


def test_plugins_in_strict_mode_fails_with_one_line(
    install: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NEURON_STRICT_PLUGINS", "1")
    install(*some_plugins())
    assert main(["plugins"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "neuron-turn: error: Plugin 'provider-broken' (neuron-provider-broken 1.0.0, entry point "
        "neuron_turn: provider-broken = neuron_provider_broken.plugin) failed to load: "
        "ModuleNotFoundError: No module named 'sdk'\n"
    )


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["plugins", "--help"]])
def test_help_documents_every_exit_code(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0", "1", "2", "3", "4", "5", "6", "7", "8", "11", "130"):
        assert f"\n  {code:<4} " in out
    assert "missing or invalid API key" in out
    assert "unknown provider" in out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["history"],  # the session id is required
        ["run", "hi", "--model", "p:m", "--max-turns", "0"],
        ["run", "hi", "--model", "p:m", "--max-turns", "two"],
        ["run", "hi", "--model", "p:m", "--max-cost", "cheap"],
        ["run", "hi", "--model", "p:m", "--max-cost", "-1"],
        ["run", "hi", "--model", "p:m", "--max-cost", "1e999999999"],
        ["run", "hi", "--model", "p:m", "--max-cost", "NaN"],
        ["run", "hi", "--model", "p:m", "--max-cost", "-Infinity"],
        ["run", "hi", "--model", "p:m", "--max-duration", "-5"],
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "usage: neuron-turn" in capsys.readouterr().err


def test_a_cost_beyond_the_wire_is_a_usage_error_saying_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "hi", "--model", "p:m", "--max-cost", "1e999999999"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --max-cost" in err and "exponent must be at most 28" in err
    assert "Traceback" not in err
