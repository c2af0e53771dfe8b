"""The plugin manager: registering plugins, lookups, conflicts, hooks and tools, caching."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Set
from typing import Any

import pytest

from layer0 import Continue, HookAction, HookContext, HookPoint
from neuron_hooks import HookRegistry
from neuron_tool import tool
from neuron_turn import hookimpl
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import ProviderAuthenticationError
from neuron_turn.plugins import (
    PluginFailure,
    PluginManager,
    PluginOrigin,
    get_plugin_manager,
    reset_plugin_manager,
)
from neuron_turn.plugins.errors import (
    DuplicatePluginError,
    InvalidModelError,
    NameConflictError,
    PluginError,
    PluginFactoryError,
    ProviderConflictError,
    UnknownContextStrategyError,
    UnknownOrchestratorError,
    UnknownProviderError,
    UnknownStateStoreError,
    UnknownToolError,
)
from neuron_turn.plugins.warnings import PluginLoadWarning


class Echo:
    def __init__(self, model: str, **options: Any) -> None:
        self.model = model
        self.options = options

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return ProviderResponse(content=[TextPart(self.model)], stop_reason="end_turn")


class Observer:
    points: Set[HookPoint] = frozenset({HookPoint.PRE_INFERENCE})

    def __init__(self, name: str) -> None:
        self.name = name

    async def on_event(self, ctx: HookContext) -> HookAction:
        return Continue()


def providers_plugin(*names: str, aliases: tuple[str, ...] = ()) -> object:
    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            for name in names:
                register(name, Echo, aliases=aliases)

    return Plugin()


def origin(name: str, distribution: str) -> PluginOrigin:
    return PluginOrigin(
        name, distribution=distribution, version="1.0", entry_point=f"{name}.plugin"
    )


@pytest.fixture
def manager() -> PluginManager:
    return PluginManager()


def test_a_new_manager_holds_only_the_builtin_plugin(manager: PluginManager) -> None:
    (builtin,) = manager.plugins()
    assert builtin.name == "builtin"
    assert builtin.origin.distribution == "neuron-turn"
    assert builtin.hooks == ("register_context_strategies",)
    assert builtin.registered["context_strategies"] == ("sliding_window", "none")
    assert manager.failures == ()
    assert PluginManager(builtins=False).plugins() == []


def test_get_provider_calls_the_factory_with_model_and_options(manager: PluginManager) -> None:
    manager.register(providers_plugin("echo"), name="echo-plugin")
    provider = manager.get_provider("echo:small-1", temperature=0.5)
    assert isinstance(provider, Echo)
    assert provider.model == "small-1"
    assert provider.options == {"temperature": 0.5}


def test_the_model_is_everything_after_the_first_colon(manager: PluginManager) -> None:
    manager.register(providers_plugin("ollama"), name="ollama")
    provider = manager.get_provider("ollama:llama3.2:8b")
    assert isinstance(provider, Echo)
    assert provider.model == "llama3.2:8b"


def test_aliases_reach_the_same_factory(manager: PluginManager) -> None:
    manager.register(providers_plugin("anthropic", aliases=("claude",)), name="a")
    assert isinstance(manager.get_provider("claude:haiku"), Echo)
    assert manager.plugins()[-1].registered["providers"] == ("anthropic", "claude")


@pytest.mark.parametrize("model", ["claude-haiku", ":haiku", "anthropic:", ""])
def test_a_model_without_provider_prefix_is_refused_with_an_example(
    manager: PluginManager, model: str
) -> None:
    manager.register(providers_plugin("echo"), name="e")
    with pytest.raises(InvalidModelError) as caught:
        manager.get_provider(model)
    assert isinstance(caught.value, ValueError)
    assert caught.value.model == model
    message = str(caught.value)
    assert "'<provider>:<model>'" in message
    assert "anthropic:claude-haiku-4-5" in message
    assert "providers: echo" in message


def test_an_unknown_provider_lists_the_available_ones(manager: PluginManager) -> None:
    manager.register(providers_plugin("openai", "anthropic"), name="p")
    with pytest.raises(UnknownProviderError) as caught:
        manager.get_provider("antropic:claude")
    error = caught.value
    assert isinstance(error, LookupError) and isinstance(error, PluginError)
    assert error.name == "antropic"
    assert error.available == ("anthropic", "openai")
    assert str(error) == (
        "unknown provider 'antropic'; available: anthropic, openai (did you mean 'anthropic'?)"
    )


def test_an_unknown_provider_with_nothing_installed_says_what_to_run(
    manager: PluginManager,
) -> None:
    with pytest.raises(UnknownProviderError, match=r"available: none; run `neuron-turn plugins`"):
        manager.get_provider("anthropic:claude")


def test_an_unknown_name_blames_a_failed_plugin_that_likely_offered_it(
    manager: PluginManager,
) -> None:
    failure = PluginFailure(
        origin("provider-anthropic", "neuron-provider-anthropic"),
        "import",
        ModuleNotFoundError("No module named 'anthropic_sdk'"),
    )
    unrelated = PluginFailure(origin("state-redis", "neuron-state-redis"), "import", ImportError())
    with pytest.warns(PluginLoadWarning):
        manager.fail(failure)
        manager.fail(unrelated)
    with pytest.raises(UnknownProviderError) as caught:
        manager.get_provider("anthropic:claude-haiku-4-5")
    assert caught.value.failures == (failure,)
    assert (
        "maybe because Plugin 'provider-anthropic' (neuron-provider-anthropic 1.0, entry point "
        "neuron_turn: provider-anthropic = provider-anthropic.plugin) failed to load: "
        "ModuleNotFoundError: No module named 'anthropic_sdk'"
    ) in str(caught.value)
    assert "state-redis" not in str(caught.value)


def test_two_plugins_with_one_provider_name_conflict_on_that_name_only(
    manager: PluginManager,
) -> None:
    manager.register(providers_plugin("echo", "one"), origin=origin("first", "neuron-first"))
    manager.register(providers_plugin("echo", "two"), origin=origin("second", "neuron-second"))
    with pytest.raises(ProviderConflictError) as caught:
        manager.get_provider("echo:m")
    assert caught.value.plugins == ("'first' (neuron-first 1.0)", "'second' (neuron-second 1.0)")
    assert "neuron-first" in str(caught.value) and "neuron-second" in str(caught.value)
    assert isinstance(manager.get_provider("one:m"), Echo)
    assert isinstance(manager.get_provider("two:m"), Echo)
    (conflict,) = manager.conflicts()
    assert (conflict.kind, conflict.name) == ("provider", "echo")


def test_a_plugin_reusing_a_builtin_strategy_name_makes_it_ambiguous(
    manager: PluginManager,
) -> None:
    class Plugin:
        @hookimpl
        def register_context_strategies(self, register: Any) -> None:
            register("sliding_window", lambda **options: None)

    manager.register(Plugin(), name="mine")
    with pytest.raises(NameConflictError) as caught:
        manager.get_context_strategy("sliding_window")
    assert not isinstance(caught.value, ProviderConflictError)
    assert "'builtin' (neuron-turn" in str(caught.value) and "'mine'" in str(caught.value)
    assert manager.get_context_strategy("none") is not None


@pytest.mark.parametrize(
    ("lookup", "error", "kind"),
    [
        (PluginManager.get_context_strategy, UnknownContextStrategyError, "context strategy"),
        (PluginManager.get_state_store, UnknownStateStoreError, "state store"),
        (PluginManager.get_orchestrator, UnknownOrchestratorError, "orchestrator"),
    ],
)
def test_unknown_names_of_each_kind(
    manager: PluginManager, lookup: Any, error: type[Exception], kind: str
) -> None:
    with pytest.raises(error, match=f"unknown {kind} 'nope'; available: "):
        lookup(manager, "nope")


def test_unknown_strategy_lists_the_builtins(manager: PluginManager) -> None:
    with pytest.raises(UnknownContextStrategyError, match="available: none, sliding_window"):
        manager.get_context_strategy("sliding")


def test_a_factory_that_raises_is_reported_with_its_plugin(manager: PluginManager) -> None:
    def broken(model: str) -> Echo:
        raise RuntimeError("no socket")

    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register("broken", broken)

    manager.register(Plugin(), name="broken-plugin")
    with pytest.raises(PluginFactoryError) as caught:
        manager.get_provider("broken:m")
    assert str(caught.value) == (
        "provider 'broken' (from plugin 'broken-plugin') failed to build: RuntimeError: no socket"
    )
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_wrong_options_name_the_strategy(manager: PluginManager) -> None:
    with pytest.raises(PluginFactoryError, match=r"'sliding_window'.*max_mesages"):
        manager.get_context_strategy("sliding_window", max_mesages=3)


def test_provider_errors_from_a_factory_pass_through(manager: PluginManager) -> None:
    def needs_key(model: str) -> Echo:
        raise ProviderAuthenticationError("ECHO_API_KEY is not set", provider="echo")

    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register("echo", needs_key)

    manager.register(Plugin(), name="e")
    with pytest.raises(ProviderAuthenticationError, match="ECHO_API_KEY"):
        manager.get_provider("echo:m")


def test_a_factory_building_the_wrong_thing_is_refused(manager: PluginManager) -> None:
    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register("odd", lambda model: "not a provider")

    manager.register(Plugin(), name="odd")
    with pytest.raises(PluginFactoryError, match="built a str, which is not a Provider"):
        manager.get_provider("odd:m")


def hooks_plugin(*names: str, observer: bool = False) -> object:
    class Plugin:
        @hookimpl
        def register_hooks(self, register: Any) -> None:
            for name in names:
                register(Observer(name), observer=observer)

    return Plugin()


def test_hooks_come_in_plugin_order_then_registration_order(manager: PluginManager) -> None:
    manager.register(hooks_plugin("b1", "b2"), name="b")
    manager.register(hooks_plugin("a1", observer=True), name="a")
    assert [hook.name for hook in manager.registered_hooks()] == ["b.b1", "b.b2", "a.a1"]
    assert [hook.observer for hook in manager.registered_hooks()] == [False, False, True]


def test_build_hook_registry_adds_plugin_hooks_after_those_given(manager: PluginManager) -> None:
    manager.register(hooks_plugin("watch", observer=True), name="p")
    mine = HookRegistry()
    mine.add(Observer("own"), name="own")
    registry = manager.build_hook_registry(mine)
    assert registry is mine
    assert registry.names() == ("own", "p.watch")
    assert [entry.observer for entry in registry] == [False, True]
    assert manager.build_hook_registry().names() == ("p.watch",)


def test_a_hook_name_defaults_to_its_class_name(manager: PluginManager) -> None:
    class Quiet:
        points: Set[HookPoint] = frozenset({HookPoint.EXIT_CHECK})

        async def on_event(self, ctx: HookContext) -> HookAction:
            return Continue()

    class Plugin:
        @hookimpl
        def register_hooks(self, register: Any) -> None:
            register(Quiet())

    manager.register(Plugin(), name="p")
    assert [hook.name for hook in manager.registered_hooks()] == ["p.Quiet"]


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply."""
    return a * b


def tools_plugin(*tools: Any) -> object:
    class Plugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            for each in tools:
                register(each)

    return Plugin()


def test_tools_by_name_returns_them_in_the_order_asked(manager: PluginManager) -> None:
    manager.register(tools_plugin(add, mul), name="math")
    assert manager.tools_by_name(["mul", "add"]) == [mul, add]
    assert [t.name for t in manager.registered_tools()] == ["add", "mul"]
    assert manager.tools_by_name([]) == []


def test_an_unknown_tool_lists_the_available_ones(manager: PluginManager) -> None:
    manager.register(tools_plugin(add, mul), name="math")
    with pytest.raises(UnknownToolError, match="unknown tool 'sub'; available: add, mul"):
        manager.tools_by_name(["add", "sub"])


def test_a_tool_two_plugins_registered_is_ambiguous(manager: PluginManager) -> None:
    manager.register(tools_plugin(add), name="one")
    manager.register(tools_plugin(add, mul), name="two")
    with pytest.raises(NameConflictError, match="tool 'add' is registered by more than one"):
        manager.tools_by_name(["add"])
    assert manager.tools_by_name(["mul"]) == [mul]


def test_a_taken_plugin_name_is_refused(manager: PluginManager) -> None:
    manager.register(providers_plugin("a"), name="p")
    with pytest.raises(DuplicatePluginError, match="'p' is already taken by 'p'"):
        manager.register(providers_plugin("b"), name="p")
    with pytest.raises(DuplicatePluginError, match="already taken by 'builtin' \\(neuron-turn"):
        manager.register(providers_plugin("c"), name="builtin")


def test_unregister_removes_what_the_plugin_registered(manager: PluginManager) -> None:
    manager.register(providers_plugin("echo"), name="p")
    manager.unregister("p")
    assert not manager.has_plugin("p")
    with pytest.raises(UnknownProviderError):
        manager.get_provider("echo:m")
    manager.register(providers_plugin("echo"), name="p")  # the name is free again
    manager.unregister("never-registered")


@pytest.fixture
def shared_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Only the fixture plugin, so plugins other engineers are mid-way through
    # writing cannot make these tests fail.
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "fixture-plugin")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.mark.usefixtures("shared_manager")
def test_the_shared_manager_is_built_once_and_reset_on_demand() -> None:
    first = get_plugin_manager()
    assert get_plugin_manager() is first
    reset_plugin_manager()
    assert get_plugin_manager() is not first


def test_importing_neuron_turn_loads_no_plugin() -> None:
    script = textwrap.dedent(
        """
        import importlib.metadata, sys

        original = importlib.metadata.entry_points

        def refuse(**params):
            if params.get("group") == "neuron_turn":
                raise AssertionError("neuron_turn entry points were read at import time")
            return original(**params)

        importlib.metadata.entry_points = refuse
        import neuron_turn, neuron_turn.plugins, neuron_turn.cli, neuron_turn.plugins.hookspecs
        assert neuron_turn.plugins.get_plugin_manager.cache_info().currsize == 0
        loaded = [m for m in sys.modules if m.startswith("neuron_fixture_plugin")]
        assert not loaded, loaded
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
