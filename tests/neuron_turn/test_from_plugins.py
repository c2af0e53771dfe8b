"""NeuronTurn.from_plugins: provider, tools, hooks and context strategy from plugins.

Uses the fixture plugin distribution under tests/fixtures/plugins, installed
for real by scripts/setup and found through its entry point.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from layer0 import Continue, HookAction, HookContext, HookPoint, TurnInput
from neuron_hooks import FunctionHook
from neuron_tool import tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, RegisterProvider, hookimpl
from neuron_turn.plugins import PluginManager, reset_plugin_manager
from neuron_turn.testing import FunctionProvider, text_response


@pytest.fixture(autouse=True)
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Only the fixture plugin: what else is installed must not change these tests.
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "fixture-plugin")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@tool
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


async def _noop(ctx: HookContext) -> HookAction:
    return Continue()


async def test_builds_a_working_turn_from_the_fixture_plugin() -> None:
    turn = NeuronTurn.from_plugins(model="fixture:tool", tools=["fixture_add"], system="Be exact.")
    output = await turn.execute(TurnInput(message="add 2 and 3", trigger="user"))
    assert output.exit_reason == "complete"
    assert [r.name for r in output.metadata.tools_called] == ["fixture_add"]
    assert turn.config.model == "tool"
    assert turn.config.system == "Be exact."


def test_named_and_object_tools_keep_the_given_order() -> None:
    turn = NeuronTurn.from_plugins(model="fixture:echo", tools=[shout, "fixture_add"])
    assert turn.tools.names() == ["shout", "fixture_add"]


def test_plugin_hooks_come_first_then_the_given_hooks() -> None:
    mine = FunctionHook(_noop, points=[HookPoint.EXIT_CHECK], name="mine")
    turn = NeuronTurn.from_plugins(model="fixture:echo", hooks=[mine])
    names = turn.hooks.names()
    assert names == ("fixture-plugin.fixture_observer", "mine")


def test_context_strategy_is_looked_up_by_name_and_can_be_off() -> None:
    with_window = NeuronTurn.from_plugins(model="fixture:echo")
    assert with_window.context is not None
    assert type(with_window.context).__name__ == "SlidingWindow"
    assert NeuronTurn.from_plugins(model="fixture:echo", context=None).context is None


def test_config_is_kept_with_the_model_from_the_model_string() -> None:
    base = NeuronTurnConfig(max_turns=3, system="Base.")
    turn = NeuronTurn.from_plugins(model="fixture:echo", config=base)
    assert (turn.config.max_turns, turn.config.model, turn.config.system) == (3, "echo", "Base.")


def test_instructions_and_deps_go_into_the_turn() -> None:
    def instructions(context: object) -> str:
        return "dynamic"

    turn = NeuronTurn.from_plugins(model="fixture:echo", instructions=instructions, deps=[1])
    assert turn.config.instructions is instructions and turn.deps == [1]
    assert turn.with_output(int).deps == [1]


def test_unknown_provider_error_lists_the_available_ones() -> None:
    from neuron_turn.plugins.errors import UnknownProviderError

    with pytest.raises(UnknownProviderError) as exc:
        NeuronTurn.from_plugins(model="antropic:claude")
    assert "fixture" in str(exc.value)


def test_an_explicit_plugin_manager_is_used_instead_of_the_shared_one() -> None:
    def make(model: str, **options: Any) -> FunctionProvider:
        return FunctionProvider(lambda request: text_response(model))

    class Plugin:
        @hookimpl
        def register_providers(self, register: RegisterProvider) -> None:
            register("mine", make)

    manager = PluginManager()
    manager.register(Plugin(), name="mine-plugin")
    turn = NeuronTurn.from_plugins(model="mine:m1", plugins=manager, context=None)
    assert turn.config.model == "m1"
