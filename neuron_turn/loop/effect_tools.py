"""Effect tools: tools the model calls to declare effects instead of acting.

`write_memory`, `delete_memory`, `delegate`, `handoff` and `signal` are
offered to the model like any tool, but the loop never runs them: it checks
their arguments and the caller's grant (`layer0.EffectPolicy`), declares the
matching `layer0.Effect`, and answers the model with a short confirmation.
The orchestrator carries the effects out.

Only what is granted is offered: by default the memory tools, for the
turn's own session only (scope `session`), and no delegate, handoff or
signal tool. The schemas say what is granted (an `enum` of scopes or
agents when the grants name them), so a model is told its bounds up
front; a call outside them gets a tool error it can read, and no effect.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, ValidationError

from layer0 import (
    AgentScope,
    CustomScope,
    DelegateEffect,
    DeleteMemoryEffect,
    Effect,
    EffectKind,
    EffectPolicy,
    HandoffEffect,
    Scope,
    SessionId,
    SessionScope,
    SignalEffect,
    SignalPayload,
    TurnInput,
    WorkflowScope,
    WriteMemoryEffect,
    effect_refusal,
)
from neuron_tool import ToolSchema

from ._loop_keys import kept_by_loop

__all__ = [
    "EFFECT_TOOL_NAMES",
    "MAX_MEMORY_NAME_BYTES",
    "EffectArgumentError",
    "EffectNotGrantedError",
    "EffectToolError",
    "declare_effect",
    "effect_tool_schemas",
    "parse_scope",
]

OWN_SESSION: Final = "session"
"""The scope string that names the turn's own session."""


class EffectToolError(ValueError):
    """An effect-tool call declares nothing; the message is for the model."""


class EffectArgumentError(EffectToolError):
    """The model called an effect tool with arguments that do not fit it."""


class EffectNotGrantedError(EffectToolError):
    """The model asked for an effect outside what the caller granted."""


def parse_scope(text: str, session: SessionId | None = None) -> Scope:
    """Read a scope string as the effect tools take it.

    `session` alone is the turn's own session (when it has one); `global`,
    `session:<id>`, `workflow:<id>` and `agent:<workflow>/<agent>` name layer0
    scopes; `custom:<name>` and anything else are custom scopes.
    """
    if text == "global":
        return "global"
    if text == OWN_SESSION and session is not None:
        return SessionScope(id=session)
    kind, _, rest = text.partition(":")
    if rest:
        if kind == "session":
            return SessionScope(id=rest)
        if kind == "workflow":
            return WorkflowScope(id=rest)
        if kind == "custom":
            return CustomScope(name=rest)
        workflow, slash, agent = rest.partition("/")
        if kind == "agent" and slash and workflow and agent:
            return AgentScope(workflow=workflow, agent=agent)
    return CustomScope(name=text)


MAX_MEMORY_NAME_BYTES: Final = 512
"""Most UTF-8 bytes of the key, and of the scope, that a memory effect tool takes.

Why: PostgresStore indexes scope and key together and refuses an entry past
about 2.7 kB, and one refused write fails every memory effect of its turn, the
turn's own history included. Within this bound a key is also one `read_memory`
takes (up to 512 characters).
"""


def _storable_key(key: str) -> str:
    # PostgreSQL text cannot hold NUL; a key with one fails the turn's writes there.
    if "\0" in key:
        raise ValueError("a key cannot hold a NUL character; choose another key")
    size = len(key.encode("utf-8", "surrogatepass"))
    if size > MAX_MEMORY_NAME_BYTES:
        raise ValueError(
            f"a key is at most {MAX_MEMORY_NAME_BYTES} bytes of UTF-8, this one is {size}; "
            "choose a shorter key"
        )
    return key


def _storable_scope(scope: str) -> str:
    # Stores keep a scope as JSON, where a control character takes six bytes.
    if any(ord(c) < 0x20 for c in scope):
        raise ValueError("a scope cannot hold control characters")
    size = len(scope.encode("utf-8", "surrogatepass"))
    if size > MAX_MEMORY_NAME_BYTES:
        raise ValueError(
            f"a scope is at most {MAX_MEMORY_NAME_BYTES} bytes of UTF-8, this one is {size}"
        )
    return scope


_Key = Annotated[str, AfterValidator(_storable_key)]
_ScopeText = Annotated[str, AfterValidator(_storable_scope)]

_SCOPE_HELP: Final = (
    "Where the memory lives: 'session' (this conversation), 'global', "
    "'session:<id>', 'workflow:<id>', 'agent:<workflow>/<agent>' or 'custom:<name>'."
)


class _Args(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class _WriteMemory(_Args):
    scope: _ScopeText = Field(default=OWN_SESSION, description=_SCOPE_HELP)
    key: _Key = Field(min_length=1, description="The key to store the value under.")
    value: JsonValue = Field(description="The value to store (any JSON).")


class _DeleteMemory(_Args):
    scope: _ScopeText = Field(default=OWN_SESSION, description=_SCOPE_HELP)
    key: _Key = Field(min_length=1, description="The key to delete.")


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
    build: Callable[[_Args, SessionId | None], Effect]
    kind: EffectKind | None = None
    """The kind granted by name (delegate, handoff, signal); None for memory tools."""
    target: str | None = None
    """The argument naming the kind's target (an agent or a workflow)."""


def _write(a: _Args, session: SessionId | None) -> Effect:
    assert isinstance(a, _WriteMemory)
    scope = _memory_scope(a.scope, a.key, session)
    return WriteMemoryEffect(scope=scope, key=a.key, value=a.value)


def _delete(a: _Args, session: SessionId | None) -> Effect:
    assert isinstance(a, _DeleteMemory)
    return DeleteMemoryEffect(scope=_memory_scope(a.scope, a.key, session), key=a.key)


def _memory_scope(text: str, key: str, session: SessionId | None) -> Scope:
    if text == OWN_SESSION and session is None:
        raise EffectNotGrantedError(
            "this turn has no session, so there is no 'session' scope to use"
        )
    scope = parse_scope(text, session)
    held = kept_by_loop(scope, key)
    if held is not None:
        # The conversation, a person's decisions, the loop's counts, the index of
        # conversations: only neuron-turn writes them.
        raise EffectNotGrantedError(
            f"the key {key!r} holds {held}, which no tool may change; choose another key"
        )
    return scope


def _delegate(a: _Args, session: SessionId | None) -> Effect:
    assert isinstance(a, _Delegate)
    return DelegateEffect(agent=a.agent, input=TurnInput(message=a.message, trigger="task"))


def _handoff(a: _Args, session: SessionId | None) -> Effect:
    assert isinstance(a, _Handoff)
    return HandoffEffect(agent=a.agent, state=a.state)


def _signal(a: _Args, session: SessionId | None) -> Effect:
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
        _Delegate,
        "Ask another agent to do a task.",
        "Delegation requested.",
        _delegate,
        "delegate",
        "agent",
    ),
    "handoff": _EffectTool(
        _Handoff,
        "Hand the conversation to another agent; this turn ends.",
        "Handoff initiated.",
        _handoff,
        "handoff",
        "agent",
    ),
    "signal": _EffectTool(
        _Signal, "Send a signal to a running workflow.", "Signal sent.", _signal, "signal", "target"
    ),
}

EFFECT_TOOL_NAMES: Final = frozenset(_TOOLS)
"""The names of the effect tools."""


@functools.cache
def _base_schema(name: str) -> Mapping[str, JsonValue]:
    # Built on first use: generating JSON Schemas at import would slow every import.
    schema: Mapping[str, JsonValue] = _TOOLS[name].args.model_json_schema()
    return schema


@functools.lru_cache(maxsize=256)
def effect_tool_schemas(
    policy: EffectPolicy | None = None, session: SessionId | None = None
) -> tuple[ToolSchema, ...]:
    """Return the schemas of the effect tools `policy` grants a turn of `session`.

    `policy` None means every effect (`EffectPolicy.everything()`). Memory
    tools are offered when some scope is granted; their `scope` lists the
    granted scopes. Delegate, handoff and signal are offered only when
    granted; their target lists the granted agents or workflows when the
    grants name them.
    """
    policy = EffectPolicy.everything() if policy is None else policy
    schemas = []
    for name, tool in _TOOLS.items():
        schema = _granted_schema(name, tool, policy, session)
        if schema is not None:
            schemas.append(ToolSchema(name=name, description=tool.description, input_schema=schema))
    return tuple(schemas)


def _granted_schema(
    name: str, tool: _EffectTool, policy: EffectPolicy, session: SessionId | None
) -> dict[str, JsonValue] | None:
    schema = dict(_base_schema(name))
    properties = dict(schema["properties"])  # type: ignore[arg-type]
    if tool.kind is None:
        scopes = _scope_choices(policy, session)
        if scopes == []:
            return None
        if scopes is not None:
            properties["scope"] = {
                "type": "string",
                "enum": list(scopes),
                "default": scopes[0],
                "description": "Where the memory lives"
                + (": 'session' is this conversation." if OWN_SESSION in scopes else "."),
            }
    else:
        if not policy.grants_kind(tool.kind):
            return None
        targets = policy.targets(tool.kind)
        if targets is not None:
            assert tool.target is not None
            field = dict(properties[tool.target])  # type: ignore[arg-type]
            field["enum"] = list(targets)
            properties[tool.target] = field
    schema["properties"] = properties
    return schema


def _scope_choices(policy: EffectPolicy, session: SessionId | None) -> list[str] | None:
    """The scope strings granted, own session first; None when a grant has a wildcard."""
    choices = [OWN_SESSION] if session is not None else []
    for grant in policy.memory_grants():
        if grant == "*" or grant.endswith(":*"):
            return None
        if grant != OWN_SESSION:
            choices.append(grant)
    return choices


def declare_effect(
    name: str,
    arguments: JsonValue,
    *,
    policy: EffectPolicy | None = None,
    session: SessionId | None = None,
) -> tuple[Effect, str]:
    """Return the effect an effect-tool call declares and the confirmation for the model.

    `policy` None grants every effect (`EffectPolicy.everything()`).

    Raises:
        EffectArgumentError: the arguments do not fit the tool; the message says why.
        EffectNotGrantedError: the effect is outside `policy`; the message says
            what is granted.
    """
    tool = _TOOLS[name]
    policy = EffectPolicy.everything() if policy is None else policy
    if tool.kind is not None and not policy.grants_kind(tool.kind):
        raise EffectNotGrantedError(
            f"Refused: {name} is not granted in this turn ({policy.granted_text()})"
        )
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: "
            f"{str(e['msg']).removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise EffectArgumentError(f"invalid arguments for {name}: {problems}") from exc
    try:
        effect = tool.build(args, session)
    except EffectNotGrantedError as exc:
        raise EffectNotGrantedError(f"Refused: {exc}") from None
    refusal = effect_refusal(policy, effect, session)
    if refusal is not None:
        raise EffectNotGrantedError(f"Refused: {refusal}; nothing was done")
    return effect, tool.confirmation
