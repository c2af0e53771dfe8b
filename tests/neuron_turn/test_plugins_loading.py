"""Loading entry points: broken plugins are reported and skipped, the others still load.

Entry points are faked by monkeypatching `importlib.metadata.entry_points`,
the function the loader calls, so nothing has to be installed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass
from typing import Any

import pluggy
import pytest

from layer0 import Continue, HookAction, HookContext, HookPoint
from neuron_turn import hookimpl
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TextPart
from neuron_turn.plugins import (
    PluginManager,
    PluginSettings,
    get_plugin_manager,
    reset_plugin_manager,
)
from neuron_turn.plugins.errors import (
    DuplicatePluginError,
    PluginLoadError,
    UnknownProviderError,
)
from neuron_turn.plugins.warnings import NeuronWarning, PluginLoadWarning

from .plugin_fakes import FakeEntryPoint, clear_plugin_env, install_entry_points


class Echo:
    def __init__(self, model: str) -> None:
        self.model = model

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return ProviderResponse(content=[TextPart(self.model)], stop_reason="end_turn")


def provider_plugin(name: str) -> object:
    class Plugin:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register(name, Echo)

    return Plugin()


class MisspelledHook:
    @hookimpl
    def register_provider(self, register: Any) -> None:
        register("typo", Echo)


class ExtraArgument:
    @hookimpl
    def register_providers(self, register: Any, config: Any) -> None:
        register("extra", Echo)


class RaisingHook:
    @hookimpl
    def register_providers(self, register: Any) -> None:
        register("half", Echo)
        raise RuntimeError("boom")


class NoHooks:
    def register_providers(self, register: Any) -> None:  # the marker is missing
        register("unmarked", Echo)


class AsyncHook:
    @hookimpl
    async def register_providers(self, register: Any) -> None:
        register("async", Echo)


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Make `importlib.metadata.entry_points` list only the given fake entry points."""
    clear_plugin_env(monkeypatch)
    reset_plugin_manager()
    yield functools.partial(install_entry_points, monkeypatch)
    reset_plugin_manager()


def loaded_names(manager: PluginManager) -> list[str]:
    return [info.name for info in manager.plugins()]


def load_with_warnings(count: int) -> tuple[PluginManager, list[str]]:
    with pytest.warns(PluginLoadWarning) as caught:
        manager = get_plugin_manager()
    messages = [str(w.message) for w in caught]
    assert len(messages) == count, messages
    return manager, messages


def test_good_plugins_load_through_entry_points(install: Callable[..., None]) -> None:
    install(
        FakeEntryPoint("provider-b", provider_plugin("b")),
        FakeEntryPoint("a", provider_plugin("a")),
    )
    manager = get_plugin_manager()
    # Built-in first, then entry points sorted by name.
    assert loaded_names(manager) == ["builtin", "a", "provider-b"]
    info = manager.plugins()[2]
    assert (info.origin.distribution, info.origin.version) == ("neuron-provider-b", "1.0.0")
    assert info.origin.entry_point == "neuron_provider_b.plugin"
    assert isinstance(manager.get_provider("b:m"), Echo)


def test_a_plugin_that_fails_to_import_is_reported_and_the_rest_load(
    install: Callable[..., None],
) -> None:
    broken = FakeEntryPoint(
        "provider-anthropic",
        ModuleNotFoundError("No module named 'anthropic'"),
        version="0.3.0",
    )
    install(broken, FakeEntryPoint("provider-good", provider_plugin("good")))
    manager, (message,) = load_with_warnings(1)
    assert message == (
        "Plugin 'provider-anthropic' (neuron-provider-anthropic 0.3.0, entry point neuron_turn: "
        "provider-anthropic = neuron_provider_anthropic.plugin) failed to load: "
        "ModuleNotFoundError: No module named 'anthropic'"
    )
    assert loaded_names(manager) == ["builtin", "provider-good"]
    (failure,) = manager.failures
    assert (failure.name, failure.stage, failure.distribution) == (
        "provider-anthropic",
        "import",
        "neuron-provider-anthropic",
    )
    assert isinstance(failure.error, ModuleNotFoundError)
    # Asking for what it would have offered names it again, with its error.
    with pytest.raises(UnknownProviderError, match="maybe because Plugin 'provider-anthropic'"):
        manager.get_provider("anthropic:claude-haiku-4-5")


def test_a_misspelled_hook_is_reported_with_the_likely_name(install: Callable[..., None]) -> None:
    install(
        FakeEntryPoint("typo", MisspelledHook()), FakeEntryPoint("good", provider_plugin("good"))
    )
    manager, (message,) = load_with_warnings(1)
    assert (
        "Plugin 'typo' (neuron-typo 1.0.0, entry point neuron_turn: typo = neuron_typo.plugin)"
        in message
    )
    assert "PluginValidationError: unknown hook 'register_provider'" in message
    assert "did you mean 'register_providers'?" in message
    assert loaded_names(manager) == ["builtin", "good"]
    assert not manager.pluggy.has_plugin("typo")
    manager.pluggy.check_pending()  # nothing of it is left behind


def test_a_hook_with_an_argument_the_spec_lacks_is_reported(install: Callable[..., None]) -> None:
    install(
        FakeEntryPoint("extra", ExtraArgument()), FakeEntryPoint("good", provider_plugin("good"))
    )
    manager, (message,) = load_with_warnings(1)
    assert "Plugin 'extra'" in message and "PluginValidationError" in message
    assert "config" in message
    assert loaded_names(manager) == ["builtin", "good"]
    assert isinstance(manager.failures[0].error, pluggy.PluginValidationError)


def test_a_hook_that_raises_is_reported_and_registers_nothing(
    install: Callable[..., None],
) -> None:
    install(
        FakeEntryPoint("raiser", RaisingHook()), FakeEntryPoint("good", provider_plugin("good"))
    )
    manager, (message,) = load_with_warnings(1)
    assert message.endswith("failed to load: register_providers raised RuntimeError: boom")
    assert "neuron-raiser 1.0.0" in message and "raiser = neuron_raiser.plugin" in message
    assert loaded_names(manager) == ["builtin", "good"]
    assert manager.failures[0].stage == "register_providers"
    # What it registered before raising is gone with it.
    with pytest.raises(UnknownProviderError):
        manager.get_provider("half:m")
    assert not manager.pluggy.has_plugin("raiser")


def test_a_reused_entry_point_name_is_reported_and_the_first_kept(
    install: Callable[..., None],
) -> None:
    second = FakeEntryPoint("shared", provider_plugin("second"), distribution="neuron-second")
    install(
        FakeEntryPoint("shared", provider_plugin("first"), distribution="neuron-first"),
        second,
        FakeEntryPoint("zeta", provider_plugin("zeta")),
    )
    manager, (message,) = load_with_warnings(1)
    assert "Plugin 'shared' (neuron-second 1.0.0, entry point neuron_turn: shared = " in message
    assert "already taken by 'shared' (neuron-first 1.0.0)" in message
    assert second.loads == []  # the duplicate is never imported
    assert loaded_names(manager) == ["builtin", "shared", "zeta"]
    assert isinstance(manager.failures[0].error, DuplicatePluginError)
    assert isinstance(manager.get_provider("first:m"), Echo)


def test_an_entry_point_cannot_take_the_builtin_name(install: Callable[..., None]) -> None:
    install(FakeEntryPoint("builtin", provider_plugin("sneaky")))
    manager, (message,) = load_with_warnings(1)
    assert "already taken by 'builtin' (neuron-turn" in message
    assert manager.plugins()[0].origin.distribution == "neuron-turn"


@pytest.mark.parametrize(
    ("plugin", "expected"),
    [
        (NoHooks(), "implements no neuron_turn hook; mark them with @neuron_turn.hookimpl"),
        (AsyncHook(), "must be plain functions, not `async def`"),
    ],
)
def test_plugins_that_cannot_work_are_reported(
    install: Callable[..., None], plugin: object, expected: str
) -> None:
    install(FakeEntryPoint("odd", plugin), FakeEntryPoint("good", provider_plugin("good")))
    manager, (message,) = load_with_warnings(1)
    assert expected in message
    assert loaded_names(manager) == ["builtin", "good"]


class NotAHook:
    points: Set[HookPoint] = frozenset({HookPoint.EXIT_CHECK})

    def on_event(self, ctx: HookContext) -> HookAction:  # not async
        return Continue()


def registering(hook_name: str, *args: Any, **kwargs: Any) -> object:
    def register_all(self: object, register: Any) -> None:
        for _ in range(kwargs.pop("times", 1)):
            register(*args, **kwargs)

    return type("Plugin", (), {hook_name: hookimpl(register_all, specname=hook_name)})()


@pytest.mark.parametrize(
    ("plugin", "expected"),
    [
        (
            registering("register_providers", "p", "not callable"),
            "TypeError: the factory of provider 'p' is a str",
        ),
        (
            registering("register_providers", "a:b", Echo),
            "ValueError: provider name 'a:b' is not valid",
        ),
        (
            registering("register_providers", "p", Echo, aliases=["p"]),
            "provider 'p' is registered twice",
        ),
        (registering("register_providers", "p", Echo, times=2), "provider 'p' is registered twice"),
        (
            registering("register_context_strategies", "", Echo),
            "context strategy name '' is not valid",
        ),
        (
            registering("register_hooks", NotAHook()),
            "TypeError: hook 'NotAHook' is a NotAHook, not a layer0.Hook",
        ),
        (registering("register_tools", object()), "is not a neuron_tool.ToolDyn"),
    ],
)
def test_bad_registrations_fail_the_plugin_that_made_them(
    install: Callable[..., None], plugin: object, expected: str
) -> None:
    install(FakeEntryPoint("bad", plugin), FakeEntryPoint("good", provider_plugin("good")))
    manager, (message,) = load_with_warnings(1)
    assert "Plugin 'bad'" in message and " raised " in message
    assert expected in message
    assert loaded_names(manager) == ["builtin", "good"]


def test_every_broken_plugin_is_reported_and_the_good_one_still_loads(
    install: Callable[..., None],
) -> None:
    install(
        FakeEntryPoint("a-import", ImportError("no")),
        FakeEntryPoint("b-typo", MisspelledHook()),
        FakeEntryPoint("c-raise", RaisingHook()),
        FakeEntryPoint("d-good", provider_plugin("good")),
        FakeEntryPoint("d-good", provider_plugin("dup"), distribution="neuron-dup"),
    )
    manager, messages = load_with_warnings(4)
    assert [m.split("'")[1] for m in messages] == ["a-import", "b-typo", "c-raise", "d-good"]
    assert loaded_names(manager) == ["builtin", "d-good"]
    assert [f.stage for f in manager.failures] == [
        "import",
        "validation",
        "register_providers",
        "duplicate",
    ]


def test_plugin_load_warnings_are_neuron_warnings() -> None:
    assert issubclass(PluginLoadWarning, NeuronWarning)
    assert issubclass(NeuronWarning, UserWarning)


def test_strict_mode_raises_with_the_failure_fields(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STRICT_PLUGINS", "1")
    install(FakeEntryPoint("provider-x", ImportError("no x"), version="2.1"))
    with pytest.raises(PluginLoadError) as caught:
        get_plugin_manager()
    error = caught.value
    assert (error.plugin, error.distribution, error.version) == (
        "provider-x",
        "neuron-provider-x",
        "2.1",
    )
    assert error.entry_point == "neuron_provider_x.plugin"
    assert str(error).endswith("failed to load: ImportError: no x")
    assert isinstance(error.__cause__, ImportError)
    # Nothing was cached: once the plugin is fixed, the next call loads it.
    install(FakeEntryPoint("provider-x", provider_plugin("x")))
    assert isinstance(get_plugin_manager().get_provider("x:m"), Echo)


@pytest.mark.parametrize("value", ["0", "", "no"])
def test_strict_mode_is_off_unless_set(value: str) -> None:
    assert not PluginSettings.from_env({"NEURON_STRICT_PLUGINS": value}).strict
    assert PluginSettings.from_env({"NEURON_STRICT_PLUGINS": "1"}).strict


def three() -> tuple[FakeEntryPoint, ...]:
    return (
        FakeEntryPoint("provider-a", provider_plugin("a")),
        FakeEntryPoint("provider-b", provider_plugin("b"), distribution="neuron-bee"),
        FakeEntryPoint("provider-c", provider_plugin("c")),
    )


@pytest.mark.parametrize(
    ("allow", "loaded"),
    [
        ("provider-a", ["provider-a"]),
        ("provider-a, neuron-bee", ["provider-a", "provider-b"]),  # an entry point or distribution
        ("Neuron_Bee", ["provider-b"]),  # distribution names are normalised
        ("", []),  # set but empty: no plugins, only the built-in
    ],
)
def test_the_allow_list_loads_only_the_plugins_named(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch, allow: str, loaded: list[str]
) -> None:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", allow)
    entry_points = three()
    install(*entry_points)
    manager = get_plugin_manager()
    assert loaded_names(manager) == ["builtin", *loaded]
    skipped = [ep for ep in entry_points if ep.name not in loaded]
    assert all(ep.loads == [] for ep in skipped)
    assert [origin.name for origin in manager.disabled] == [ep.name for ep in skipped]


@pytest.mark.parametrize("deny", ["provider-b", "neuron-bee", "provider-b,provider-zzz"])
def test_the_deny_list_blocks_plugins(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch, deny: str
) -> None:
    monkeypatch.setenv("NEURON_DISABLE_PLUGINS", deny)
    install(*three())
    manager = get_plugin_manager()
    assert loaded_names(manager) == ["builtin", "provider-a", "provider-c"]
    assert manager.pluggy.is_blocked("provider-b")


def test_the_deny_list_wins_over_the_allow_list(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", "provider-a,provider-b")
    monkeypatch.setenv("NEURON_DISABLE_PLUGINS", "provider-b")
    install(*three())
    assert loaded_names(get_plugin_manager()) == ["builtin", "provider-a"]


def test_an_entry_point_without_distribution_is_named_without_one() -> None:
    @dataclass
    class Bare:
        name: str = "bare"
        value: str = "bare_plugin"

        def load(self) -> object:
            raise ImportError("nope")

    manager = PluginManager()
    with pytest.warns(
        PluginLoadWarning,
        match=r"^Plugin 'bare' \(entry point neuron_turn: bare = bare_plugin\) failed",
    ):
        manager.load_entry_points(PluginSettings(), entry_points=[Bare()])


def test_two_entry_points_naming_one_module_load_it_once(install: Callable[..., None]) -> None:
    plugin = provider_plugin("once")
    install(FakeEntryPoint("first", plugin), FakeEntryPoint("second", plugin))
    manager, (message,) = load_with_warnings(1)
    assert message.endswith(
        "failed to load: PluginError: plugin 'second' is the same object as the plugin 'first', "
        "already registered; two entry points must not name one module"
    )
    assert loaded_names(manager) == ["builtin", "first"]
    assert isinstance(manager.get_provider("once:m"), Echo)
