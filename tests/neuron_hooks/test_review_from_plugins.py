"""Hooks given to `NeuronTurn.from_plugins`: two of one class, and one that is no hook."""

from __future__ import annotations

from typing import Any

import pytest

from layer0 import HookContext, HookPoint, SkipTool, usd
from neuron_hooks import InvalidHookError, ToolPolicyHook
from neuron_turn import NeuronTurn, hookimpl
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TextPart
from neuron_turn.plugins import PluginManager


class Echo:
    built: list[str] = []

    def __init__(self, model: str) -> None:
        Echo.built.append(model)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return ProviderResponse(content=[TextPart("hi")], stop_reason="end_turn")


class Plugin:
    @hookimpl
    def register_providers(self, register: Any) -> None:
        register("echo", Echo)


def manager() -> PluginManager:
    plugins = PluginManager()
    plugins.register(Plugin(), name="echo-plugin")
    return plugins


def pre_tool_use(tool_name: str) -> HookContext:
    return HookContext(
        point=HookPoint.PRE_TOOL_USE,
        tool_name=tool_name,
        tool_input={},
        tokens_used=0,
        cost=usd("0"),
        turns_completed=0,
        elapsed=0,
    )


async def test_two_hooks_of_one_class_are_both_kept_under_numbered_names() -> None:
    # from_plugins takes no names: the second was refused, advising a name= it cannot take.
    deny_rm, allow_read = ToolPolicyHook(deny=["rm"]), ToolPolicyHook(allow=["read*"])

    turn = NeuronTurn.from_plugins(model="echo:m", hooks=[deny_rm, allow_read], plugins=manager())

    assert turn.hooks.names() == ("ToolPolicyHook", "ToolPolicyHook#2")
    assert isinstance(await turn.hooks.dispatch(pre_tool_use("write")), SkipTool)
    assert isinstance(await turn.hooks.dispatch(pre_tool_use("rm")), SkipTool)


def test_an_object_that_is_no_hook_is_refused_before_the_provider_is_built() -> None:
    Echo.built.clear()

    with pytest.raises(InvalidHookError, match="lacks `points` or `on_event`"):
        NeuronTurn.from_plugins(model="echo:m", hooks=[object()], plugins=manager())  # type: ignore[list-item]

    assert Echo.built == []  # nothing was built that would need closing


def test_an_unknown_tool_name_is_refused_before_the_provider_is_built() -> None:
    from neuron_turn.plugins.errors import PluginError

    Echo.built.clear()

    with pytest.raises(PluginError, match="no_such_tool"):
        NeuronTurn.from_plugins(model="echo:m", tools=["no_such_tool"], plugins=manager())

    assert Echo.built == []  # nothing was built that would need closing
