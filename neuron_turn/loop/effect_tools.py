"""Effect tools: tools the model calls to declare effects instead of acting.

`write_memory`, `delete_memory`, `delegate`, `handoff` and `signal` are
offered to the model like any tool, but the loop never runs them: it checks
their arguments, declares the matching `layer0.Effect`, and answers the
model with a short confirmation. The orchestrator carries the effects out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from layer0 import (
    AgentScope,
    CustomScope,
    DelegateEffect,
    DeleteMemoryEffect,
    Effect,
    HandoffEffect,
    Scope,
    SessionScope,
    SignalEffect,
    SignalPayload,
    TurnInput,
    WorkflowScope,
    WriteMemoryEffect,
)
from neuron_tool import ToolSchema

__all__ = [
    "EFFECT_TOOL_NAMES",
    "EffectArgumentError",
    "declare_effect",
    "effect_tool_schemas",
    "parse_scope",
]


class EffectArgumentError(ValueError):
    """The model called an effect tool with arguments that do not fit it."""


def parse_scope(text: str) -> Scope:
    """Read a scope string as the effect tools take it.

    `global`, `session:<id>`, `workflow:<id>` and `agent:<workflow>/<agent>`
    name layer0 scopes; anything else is a custom scope named by the string.
    """
    if text == "global":
        return "global"
    kind, _, rest = text.partition(":")
    if rest:
        if kind == "session":
            return SessionScope(id=rest)
        if kind == "workflow":
            return WorkflowScope(id=rest)
        workflow, slash, agent = rest.partition("/")
        if kind == "agent" and slash and workflow and agent:
            return AgentScope(workflow=workflow, agent=agent)
    return CustomScope(name=text)


_SCOPE_HELP: Final = (
    "Where the memory lives: 'global', 'session:<id>', 'workflow:<id>', "
    "'agent:<workflow>/<agent>', or any other string for a custom scope."
)


class _Args(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _WriteMemory(_Args):
    scope: str = Field(description=_SCOPE_HELP)
    key: str = Field(min_length=1, description="The key to store the value under.")
    value: JsonValue = Field(description="The value to store (any JSON).")


class _DeleteMemory(_Args):
    scope: str = Field(description=_SCOPE_HELP)
    key: str = Field(min_length=1, description="The key to delete.")


class _Delegate(_Args):
    agent: str = Field(min_length=1, description="The agent to delegate to.")
    message: str = Field(description="The task for that agent, in plain words.")


class _Handoff(_Args):
    agent: str = Field(min_length=1, description="The agent to hand the conversation to.")
    state: JsonValue = Field(default=None, description="What that agent needs to pick up.")


class _Signal(_Args):
    target: str = Field(min_length=1, description="The workflow id to signal.")
    signal_type: str = Field(min_length=1, description="The kind of signal.")
    data: JsonValue = Field(default=None, description="The signal's data (any JSON).")


@dataclass(frozen=True, slots=True)
class _EffectTool:
    args: type[_Args]
    description: str
    confirmation: str
    build: Callable[[_Args], Effect]


def _write(a: _Args) -> Effect:
    assert isinstance(a, _WriteMemory)
    return WriteMemoryEffect(scope=parse_scope(a.scope), key=a.key, value=a.value)


def _delete(a: _Args) -> Effect:
    assert isinstance(a, _DeleteMemory)
    return DeleteMemoryEffect(scope=parse_scope(a.scope), key=a.key)


def _delegate(a: _Args) -> Effect:
    assert isinstance(a, _Delegate)
    return DelegateEffect(agent=a.agent, input=TurnInput(message=a.message, trigger="task"))


def _handoff(a: _Args) -> Effect:
    assert isinstance(a, _Handoff)
    return HandoffEffect(agent=a.agent, state=a.state)


def _signal(a: _Args) -> Effect:
    assert isinstance(a, _Signal)
    payload = SignalPayload(signal_type=a.signal_type, data=a.data)
    return SignalEffect(target=a.target, payload=payload)


_TOOLS: Final[Mapping[str, _EffectTool]] = {
    "write_memory": _EffectTool(
        _WriteMemory, "Store a value in memory for later turns.", "Memory written.", _write
    ),
    "delete_memory": _EffectTool(
        _DeleteMemory, "Delete a value from memory.", "Memory deleted.", _delete
    ),
    "delegate": _EffectTool(
        _Delegate, "Ask another agent to do a task.", "Delegation requested.", _delegate
    ),
    "handoff": _EffectTool(
        _Handoff,
        "Hand the conversation to another agent; this turn ends.",
        "Handoff initiated.",
        _handoff,
    ),
    "signal": _EffectTool(_Signal, "Send a signal to a running workflow.", "Signal sent.", _signal),
}

EFFECT_TOOL_NAMES: Final = frozenset(_TOOLS)
"""The names of the effect tools."""


@functools.cache
def effect_tool_schemas() -> tuple[ToolSchema, ...]:
    """Return the schemas of the effect tools, as offered to the model."""
    # Built on first use: generating JSON Schemas at import would slow every import.
    return tuple(
        ToolSchema(
            name=name, description=tool.description, input_schema=tool.args.model_json_schema()
        )
        for name, tool in _TOOLS.items()
    )


def declare_effect(name: str, arguments: JsonValue) -> tuple[Effect, str]:
    """Return the effect an effect-tool call declares and the confirmation for the model.

    Raises:
        EffectArgumentError: the arguments do not fit the tool; the message says why.
    """
    tool = _TOOLS[name]
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
        )
        raise EffectArgumentError(f"invalid arguments for {name}: {problems}") from exc
    return tool.build(args), tool.confirmation
