"""Hooks from entry-point plugins: one that cannot run fails its own plugin's load."""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any

import pytest

from layer0 import Continue, HookAction, HookContext, HookPoint
from neuron_turn import hookimpl
from neuron_turn.plugins import get_plugin_manager, reset_plugin_manager
from neuron_turn.plugins.warnings import PluginLoadWarning
from tests.neuron_turn.plugin_fakes import FakeEntryPoint, clear_plugin_env, install_entry_points


class Misspelt:
    points: Set[str] = frozenset({"pre_tool"})

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()


class Pointless:
    points: Set[HookPoint] = frozenset()

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()


class Watch:
    points: Set[HookPoint] = frozenset({HookPoint.EXIT_CHECK})

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()


def hook_plugin(hook: object) -> object:
    class Plugin:
        @hookimpl
        def register_hooks(self, register: Any) -> None:
            register(hook)

    return Plugin()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    clear_plugin_env(monkeypatch)
    reset_plugin_manager()
    yield monkeypatch
    reset_plugin_manager()


@pytest.mark.parametrize(
    ("hook", "expected"),
    [
        (Misspelt(), "hook 'bad.Misspelt' declares an unknown point"),
        (Pointless(), "hook 'bad.Pointless' declares no points"),
    ],
)
def test_a_plugin_hook_at_no_valid_point_fails_its_plugin_not_every_turn(
    fresh: pytest.MonkeyPatch, hook: object, expected: str
) -> None:
    good = FakeEntryPoint("good", hook_plugin(Watch()))
    install_entry_points(fresh, FakeEntryPoint("bad", hook_plugin(hook)), good)

    with pytest.warns(PluginLoadWarning) as caught:
        manager = get_plugin_manager()

    (message,) = [str(w.message) for w in caught]
    assert "Plugin 'bad'" in message and expected in message
    # The registry every from_plugins turn builds holds the good plugin's hook only.
    assert manager.build_hook_registry().names() == ("good.Watch",)
