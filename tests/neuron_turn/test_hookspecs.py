"""Every hook spec is documented per the house template, and its example plugin works."""

from __future__ import annotations

import asyncio
import inspect
import textwrap
import types
from typing import Any

import pluggy
import pytest

import neuron_turn
from layer0 import (
    AgentNotFound,
    EnvironmentSpec,
    HookContext,
    HookPoint,
    ProcessBoundary,
    ProvisionFailed,
    TurnInput,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_hooks import HookRegistry
from neuron_turn.loop.provider import ProviderMessage, ProviderRequest, TextPart
from neuron_turn.loop.turn import NeuronTurn
from neuron_turn.plugins import PluginManager, hookspecs
from neuron_turn.testing import ScriptedProvider, text_response

SPECS = [getattr(hookspecs, name) for name in hookspecs.HOOK_NAMES]


def example_source(spec: Any) -> str:
    doc = inspect.getdoc(spec)
    assert doc is not None
    _, marker, example = doc.partition("\nExample:\n")
    assert marker, f"{spec.__name__} has no Example: section"
    return textwrap.dedent(example)


def example_plugin(spec: Any) -> types.ModuleType:
    module = types.ModuleType(f"example_{spec.__name__}")
    exec(compile(example_source(spec), f"<{spec.__name__} example>", "exec"), module.__dict__)
    return module


def manager_with_example(spec: Any) -> PluginManager:
    manager = PluginManager()
    manager.register(example_plugin(spec), name="example")
    return manager


def test_the_specs_are_declared_and_nothing_else() -> None:
    pm = PluginManager().pluggy
    declared = {name for name in vars(pm.hook) if not name.startswith("_")}
    assert declared == set(hookspecs.HOOK_NAMES)
    for name in hookspecs.HOOK_NAMES:
        assert getattr(pm.hook, name).has_spec()


@pytest.mark.parametrize("spec", SPECS, ids=hookspecs.HOOK_NAMES)
def test_each_spec_follows_the_docstring_template(spec: Any) -> None:
    doc = inspect.getdoc(spec)
    assert doc is not None
    summary, _, body = doc.partition("\n\n")
    assert "\n" not in summary and summary.endswith(".")
    assert "Called once per plugin" in body  # when, and how often
    assert "\nArgs:\n    register:" in body  # the argument, and what to do with it
    assert "two plugins" in " ".join(body.lower().split())  # how name conflicts are handled
    assert "@hookimpl" in example_source(spec)
    assert list(inspect.signature(spec).parameters) == ["register"]


def test_plugin_authors_get_hookimpl_from_neuron_turn() -> None:
    assert neuron_turn.hookimpl is hookspecs.hookimpl
    assert isinstance(neuron_turn.hookimpl, pluggy.HookimplMarker)
    assert hookspecs.hookimpl.project_name == hookspecs.PROJECT == "neuron_turn"
    assert "hookspec" not in dir(neuron_turn)


@pytest.mark.parametrize("spec", SPECS, ids=hookspecs.HOOK_NAMES)
def test_each_example_is_a_plugin_that_loads(spec: Any) -> None:
    manager = manager_with_example(spec)
    (info,) = [info for info in manager.plugins() if info.name == "example"]
    assert info.hooks == (spec.__name__,)


async def test_register_providers_example() -> None:
    manager = manager_with_example(hookspecs.register_providers)
    provider = manager.get_provider("echo:any-model")
    request = ProviderRequest(
        model="any-model", messages=[ProviderMessage("user", [TextPart("hi")])]
    )
    response = await provider.complete(request)
    assert response.content == [TextPart("hi")]
    assert response.model == "any-model"
    assert type(manager.get_provider("parrot:m")) is type(provider)


async def test_register_context_strategies_example() -> None:
    manager = manager_with_example(hookspecs.register_context_strategies)
    strategy = manager.get_context_strategy("keep_last", count=2)
    messages = [ProviderMessage("user", [TextPart(str(i))]) for i in range(5)]
    assert strategy.should_compact(messages, limit=10_000)
    assert await strategy.compact(messages) == messages[-2:]


async def test_register_hooks_example() -> None:
    manager = manager_with_example(hookspecs.register_hooks)
    (registered,) = manager.registered_hooks()
    assert registered.name == "example.count_model_calls"
    assert registered.observer
    registry = manager.build_hook_registry()
    ctx = HookContext(
        point=HookPoint.PRE_INFERENCE, tokens_used=0, cost=usd(), turns_completed=0, elapsed=0
    )
    await registry.dispatch(ctx)
    await registry.dispatch(ctx)
    assert registered.hook.calls == 2  # type: ignore[attr-defined]


async def test_register_tools_example() -> None:
    manager = manager_with_example(hookspecs.register_tools)
    (add,) = manager.tools_by_name(["add"])
    assert add.description == "Add two integers."
    assert await add.call({"a": 2, "b": 3}) == 5


async def test_register_state_stores_example() -> None:
    manager = manager_with_example(hookspecs.register_state_stores)
    store = manager.get_state_store("memory")
    await store.write("global", "greeting", "hello")
    assert await store.read("global", "greeting") == "hello"
    assert await store.list("global", "gr") == ["greeting"]
    await store.delete("global", "greeting")
    assert await store.read("global", "greeting") is None


async def test_register_orchestrators_example() -> None:
    manager = manager_with_example(hookspecs.register_orchestrators)
    agent = NeuronTurn(ScriptedProvider([text_response("done")]), hooks=HookRegistry())
    orchestrator = manager.get_orchestrator("inline", agents={"helper": agent})
    turn_input = TurnInput(message="go", trigger="task")
    output = await orchestrator.dispatch("helper", turn_input)
    assert output.message.as_text() == "done"
    (missing,) = await orchestrator.dispatch_many([("nobody", turn_input)])
    assert isinstance(missing, AgentNotFound)


async def test_register_workers_example() -> None:
    manager = manager_with_example(hookspecs.register_workers)
    worker = manager.get_worker("idle", queue="q1")
    assert isinstance(worker, neuron_turn.Worker)
    agent = NeuronTurn(ScriptedProvider([]), hooks=HookRegistry())
    running = asyncio.create_task(worker.run({"helper": agent}, InMemoryStore()))
    await asyncio.sleep(0)  # let it start; it then waits until cancelled
    assert worker.hosted == ["helper"]  # type: ignore[attr-defined]
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running


async def test_register_environments_example() -> None:
    manager = manager_with_example(hookspecs.register_environments)
    agent = NeuronTurn(ScriptedProvider([text_response("done")]), hooks=HookRegistry())
    environment = manager.get_environment("inline", agent)
    turn_input = TurnInput(message="go", trigger="task")
    output = await environment.run(turn_input, EnvironmentSpec())
    assert output.message.as_text() == "done"
    with pytest.raises(ProvisionFailed, match="cannot isolate"):
        await environment.run(turn_input, EnvironmentSpec(isolation=[ProcessBoundary()]))


def test_register_approval_policies_example() -> None:
    manager = manager_with_example(hookspecs.register_approval_policies)
    policy = manager.approval_policy()
    assert policy is not None
    assert policy.requires("shell", {"command": "ls"})
    assert policy.requires("delete_file", {"path": "a"})
    assert policy.requires("write_file", {"path": "../outside.txt"})
    assert policy.requires("write_file", {"path": "/etc/passwd"})
    assert not policy.requires("write_file", {"path": "notes/today.md"})
    assert not policy.requires("read_file", {"path": "/etc/passwd"})
    (info,) = [info for info in manager.plugins() if info.name == "example"]
    assert info.registered["approval_policies"] == (
        "delete_* | shell",
        "predicate outside_workspace",
    )


async def test_register_guardrails_example() -> None:
    class Model:
        @hookspecs.hookimpl
        def register_providers(self, register: Any) -> None:
            register("scripted", lambda model: ScriptedProvider([text_response("noted")]))

    manager = manager_with_example(hookspecs.register_guardrails)
    manager.register(Model(), name="scripted")
    turn = NeuronTurn.from_plugins(model="scripted:m", plugins=manager)
    (info,) = [info for info in manager.plugins() if info.name == "example"]
    assert info.registered["guardrails"] == ("no_card_numbers (input)",)

    output = await turn.execute(TurnInput(message="4111 1111 1111 1111", trigger="user"))

    assert output.exit_reason == neuron_turn.GUARDRAIL_TRIPPED
    assert "the message may hold a card number" in output.message.as_text()


async def test_register_output_validators_example() -> None:
    class Model:
        @hookspecs.hookimpl
        def register_providers(self, register: Any) -> None:
            answers = [text_response("TODO: write it"), text_response("written")]
            register("scripted", lambda model: ScriptedProvider(answers))

    manager = manager_with_example(hookspecs.register_output_validators)
    manager.register(Model(), name="scripted")
    turn = NeuronTurn.from_plugins(model="scripted:m", plugins=manager)
    (info,) = [info for info in manager.plugins() if info.name == "example"]
    assert info.registered["output_validators"] == ("no_placeholders",)

    output = await turn.execute(TurnInput(message="write it", trigger="user"))

    assert output.message.as_text() == "written" and output.metadata.turns_used == 2


def test_a_plugin_registering_something_else_as_an_output_validator_fails_to_load() -> None:
    class Wrong:
        @hookspecs.hookimpl
        def register_output_validators(self, register: Any) -> None:
            register(lambda context, answer: answer)

    with pytest.raises(neuron_turn.PluginError, match=r"is not an output validator \(make one"):
        PluginManager().register(Wrong(), name="wrong")


def test_a_plugin_registering_something_else_as_a_guardrail_fails_to_load() -> None:
    class Wrong:
        @hookspecs.hookimpl
        def register_guardrails(self, register: Any) -> None:
            register(lambda context, message: None)

    with pytest.raises(neuron_turn.PluginError, match=r"is not a guardrail \(make one with"):
        PluginManager().register(Wrong(), name="wrong")


def test_a_plugin_registering_something_else_as_a_policy_fails_to_load() -> None:
    class Wrong:
        @hookspecs.hookimpl
        def register_approval_policies(self, register: Any) -> None:
            register(["shell"])

    with pytest.raises(neuron_turn.PluginError, match=r"is not a neuron_turn\.ApprovalPolicy"):
        PluginManager().register(Wrong(), name="wrong")


async def test_register_output_types_example() -> None:
    class Model:
        @hookspecs.hookimpl
        def register_providers(self, register: Any) -> None:
            answer = text_response('{"order": "A7", "amount_eur": 12.5}')
            register("scripted", lambda model: ScriptedProvider([answer]))

    manager = manager_with_example(hookspecs.register_output_types)
    manager.register(Model(), name="scripted")
    turn = NeuronTurn.from_plugins(model="scripted:m", plugins=manager, output_type="refund")
    (info,) = [info for info in manager.plugins() if info.name == "example"]
    assert info.registered["output_types"] == ("refund",)

    output = await turn.execute(TurnInput(message="refund A7", trigger="user"))

    refund = turn.output_value(output)
    assert type(refund).__name__ == "Refund"
    assert (refund.order, refund.amount_eur) == ("A7", 12.5)


@pytest.mark.parametrize(
    ("name", "output_type", "match"),
    [
        ("bad name", int, r"output type name 'bad name' is not valid"),
        ("anon", lambda text: text, r"define it with def"),
        ("nothing", object(), r"raised OutputTypeError: no JSON Schema for the output type"),
    ],
)
def test_a_plugin_registering_what_cannot_be_an_output_type_fails_to_load(
    name: str, output_type: Any, match: str
) -> None:
    class Wrong:
        @hookspecs.hookimpl
        def register_output_types(self, register: Any) -> None:
            register(name, output_type)

    with pytest.raises(neuron_turn.PluginError, match=match):
        PluginManager().register(Wrong(), name="wrong")


def test_an_output_type_is_asked_for_by_its_name_and_an_unknown_or_shared_one_is_refused() -> None:
    built: list[str] = []

    class Plugin:
        def __init__(self, names: list[str]) -> None:
            self.names = names

        @hookspecs.hookimpl
        def register_output_types(self, register: Any) -> None:
            for name in self.names:
                register(name, int)

    class Model:
        @hookspecs.hookimpl
        def register_providers(self, register: Any) -> None:
            register("scripted", lambda model: built.append(model) or ScriptedProvider([]))

    manager = PluginManager()
    manager.register(Plugin(["count", "shared"]), name="one")
    manager.register(Plugin(["shared"]), name="two")
    manager.register(Model(), name="scripted")

    assert NeuronTurn.from_plugins(model="scripted:m", plugins=manager, output_type="count").output
    with pytest.raises(neuron_turn.UnknownOutputTypeError, match=r"'cuont'.*did you mean 'count'"):
        NeuronTurn.from_plugins(model="scripted:m", plugins=manager, output_type="cuont")
    with pytest.raises(neuron_turn.NameConflictError, match=r"shared"):
        NeuronTurn.from_plugins(model="scripted:m", plugins=manager, output_type="shared")
    assert built == ["m"]  # refused names build no provider
    assert [str(c) for c in manager.conflicts()] == [
        str(manager._conflict("output type", "shared", ["one", "two"]))
    ]
