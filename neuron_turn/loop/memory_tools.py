"""Memory read tools: `read_memory`, `list_memory` and `search_memory`.

The model writes memory by declaring effects (`write_memory`); these tools
let it read back what it, or another agent, wrote. The loop answers them
itself from the turn's `layer0.StateReader` (nothing is declared, nothing
runs outside the loop), within the scopes the caller granted for reading
(`EffectPolicy` `read:` grants; by default the turn's own session only).

Results are JSON text for the model, bounded by `MemoryLimits`: at most
`max_entries` keys or matches, at most `max_value_bytes` of each value,
key or snippet. Whatever is cut says so in the result (a `truncated` note),
so the model knows it saw part of it. The session's conversation history
(key `messages`) is not memory: it is never listed, found or read here.

Every failure is a tool error the model can read, never an exception out of
the turn: bad arguments, a scope not granted, a store that fails.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from layer0 import (
    HISTORY_KEY,
    EffectPolicy,
    Scope,
    SessionId,
    StateReader,
    scope_text,
)
from neuron_tool import ToolSchema

from ._loop_keys import kept_by_loop
from .effect_tools import OWN_SESSION, parse_scope

__all__ = [
    "MEMORY_TOOL_NAMES",
    "MemoryArgumentError",
    "MemoryLimits",
    "MemoryNotGrantedError",
    "MemoryReader",
    "MemoryToolError",
    "memory_tool_schemas",
]

_logger = logging.getLogger("neuron_turn.memory")

MemoryToolName: TypeAlias = Literal["read_memory", "list_memory", "search_memory"]
_MAX_SCOPE: Final = 512
_MAX_QUERY: Final = 2000
_MOST_SEARCHED: Final = 1000
"""Most matches one search asks its store for, kept keys among them."""


class MemoryToolError(ValueError):
    """A memory-tool call read nothing; the message is for the model."""


class MemoryArgumentError(MemoryToolError):
    """The model called a memory tool with arguments that do not fit it."""


class MemoryNotGrantedError(MemoryToolError):
    """The model asked to read a scope the caller did not grant for reading."""


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """How much one memory-tool result may hold.

    Why: a value another agent stored can be any size, and whatever a tool
    returns goes into the model's context, and is paid for on every later call.
    """

    max_entries: int = 20
    """Most keys (`list_memory`) or matches (`search_memory`) per call; also the
    largest `limit` a call may ask for."""
    max_value_bytes: int = 4096
    """Most bytes (UTF-8) of a value's JSON, a key or a snippet in one result."""

    def __post_init__(self) -> None:
        """Refuse limits that leave no room.

        Raises:
            ValueError: naming the limit and its value.
        """
        if self.max_entries < 1:
            raise ValueError(f"max_entries must be at least 1; got {self.max_entries}")
        if self.max_value_bytes < 64:
            raise ValueError(f"max_value_bytes must be at least 64; got {self.max_value_bytes}")


_SCOPE_HELP: Final = (
    "Which memory to read: 'session' (this conversation), 'global', "
    "'session:<id>', 'workflow:<id>', 'agent:<workflow>/<agent>' or 'custom:<name>'."
)


class _Args(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)

    scope: str = Field(default=OWN_SESSION, max_length=_MAX_SCOPE, description=_SCOPE_HELP)


class _Read(_Args):
    key: str = Field(min_length=1, max_length=_MAX_SCOPE, description="The key to read.")


class _List(_Args):
    prefix: str = Field(
        default="", max_length=_MAX_SCOPE, description="Only keys starting with this."
    )
    limit: int | None = Field(default=None, ge=1, description="Most keys to return.")


class _Search(_Args):
    query: str = Field(
        min_length=1, max_length=_MAX_QUERY, description="Words to look for in stored values."
    )
    limit: int | None = Field(default=None, ge=1, description="Most matches to return.")


_ARGS: Final[Mapping[MemoryToolName, type[_Args]]] = {
    "read_memory": _Read,
    "list_memory": _List,
    "search_memory": _Search,
}
_DESCRIPTIONS: Final[Mapping[MemoryToolName, str]] = {
    "read_memory": "Read the value stored in memory under a key.",
    "list_memory": "List the keys stored in memory, optionally those starting with a prefix.",
    "search_memory": "Search memory for values containing any of the given words, best first.",
}

MEMORY_TOOL_NAMES: Final = frozenset(_ARGS)
"""The names of the memory read tools."""


@functools.lru_cache(maxsize=256)
def memory_tool_schemas(
    policy: EffectPolicy, session: SessionId | None, limits: MemoryLimits = MemoryLimits()
) -> tuple[ToolSchema, ...]:
    """Return the schemas of the memory tools for a turn of `session` under `policy`.

    Empty when nothing can be read (no session and no `read:` grant). The
    `scope` argument lists the readable scopes when the grants name them,
    and `limit` says its maximum.
    """
    scopes = _scope_choices(policy, session)
    if scopes == []:
        return ()
    schemas = []
    for name, args in _ARGS.items():
        schema = _base_schema(args)
        properties = dict(schema["properties"])  # type: ignore[arg-type]
        if scopes is not None:
            properties["scope"] = {
                "type": "string",
                "enum": list(scopes),
                "default": scopes[0],
                "description": "Which memory to read"
                + (": 'session' is this conversation." if OWN_SESSION in scopes else "."),
            }
        if "limit" in properties:
            properties["limit"] = {
                "type": "integer",
                "minimum": 1,
                "maximum": limits.max_entries,
                "description": f"Most results to return (at most {limits.max_entries}).",
            }
        schemas.append(
            ToolSchema(
                name=name,
                description=_DESCRIPTIONS[name],
                input_schema={**schema, "properties": properties},
            )
        )
    return tuple(schemas)


@functools.cache
def _base_schema(args: type[_Args]) -> Mapping[str, JsonValue]:
    # Built on first use: generating JSON Schemas at import would slow every import.
    schema: dict[str, JsonValue] = args.model_json_schema()
    schema.pop("title", None)
    return schema


def _scope_choices(policy: EffectPolicy, session: SessionId | None) -> list[str] | None:
    """The readable scope strings, own session first; None when a grant has a wildcard."""
    choices = [OWN_SESSION] if session is not None else []
    for grant in policy.read_grants():
        if grant == "*" or grant.endswith(":*"):
            return None
        if grant != OWN_SESSION:
            choices.append(grant)
    return choices


@dataclass(frozen=True, slots=True)
class MemoryReader:
    """Answers the memory tools of one turn from its state reader, within its read grants."""

    state: StateReader
    policy: EffectPolicy
    session: SessionId | None
    limits: MemoryLimits

    async def answer(self, name: str, arguments: JsonValue) -> str:
        """Return the JSON text answering the call of memory tool `name` with `arguments`.

        Raises:
            MemoryArgumentError: the arguments do not fit the tool (or the limits).
            MemoryNotGrantedError: the scope is not granted for reading.
            MemoryToolError: the state store failed; the message says how.
        """
        args_type = _ARGS[name]  # type: ignore[index]
        try:
            args = args_type.model_validate(arguments)
        except ValidationError as exc:
            raise MemoryArgumentError(f"invalid arguments for {name}: {_problems(exc)}") from None
        scope = self._scope(args.scope)
        try:
            if isinstance(args, _Read):
                result = await self._read(scope, args)
            elif isinstance(args, _List):
                result = await self._list(scope, args)
            else:
                assert isinstance(args, _Search)
                result = await self._search(scope, args)
        except MemoryToolError:
            raise
        except Exception as exc:
            # The store's own words (a locked or corrupt file...); the turn goes on, and
            # the operator, not only the model, hears of it.
            _logger.warning("memory read in scope %r failed", args.scope, exc_info=True)
            raise MemoryToolError(
                f"Error: reading memory in scope {args.scope!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return json.dumps({"scope": args.scope, **result}, ensure_ascii=False)

    def _scope(self, text: str) -> Scope:
        if text == OWN_SESSION and self.session is None:
            raise MemoryNotGrantedError(
                "Refused: this turn has no session, so there is no 'session' scope to read"
            )
        scope = parse_scope(text, self.session)
        if not self.policy.allows_read(scope, self.session):
            readable = ", ".join(self.policy.read_grants()) or "none"
            raise MemoryNotGrantedError(
                f"Refused: reading scope {scope_text(scope)!r} is not granted in this turn "
                f"(readable: own session; other scopes granted for reading: {readable})"
            )
        return scope

    def _limit(self, asked: int | None) -> int:
        most = self.limits.max_entries
        if asked is not None and asked > most:
            raise MemoryArgumentError(f"invalid arguments: limit must be at most {most}")
        return most if asked is None else asked

    async def _read(self, scope: Scope, args: _Read) -> dict[str, JsonValue]:
        _refuse_kept_by_loop(scope, args.key)
        value = await self.state.read(scope, args.key)
        if value is None:
            return {"key": args.key, "found": False}
        text = json.dumps(value, ensure_ascii=False)
        size = len(text.encode())
        if size <= self.limits.max_value_bytes:
            return {"key": args.key, "found": True, "value": value}
        return {
            "key": args.key,
            "found": True,
            "value_json_start": _cut(text, self.limits.max_value_bytes),
            "truncated": f"the value is {size} bytes of JSON; only its first "
            f"{self.limits.max_value_bytes} are shown",
        }

    async def _list(self, scope: Scope, args: _List) -> dict[str, JsonValue]:
        limit = self._limit(args.limit)
        keys = [k for k in await self.state.list(scope, args.prefix) if not kept_by_loop(scope, k)]
        shown: list[JsonValue] = [self._short(key) for key in keys[:limit]]
        result: dict[str, JsonValue] = {"prefix": args.prefix, "keys": shown}
        notes = []
        if len(keys) > limit:
            notes.append(f"showing {limit} of {len(keys)} keys; ask with a longer prefix")
        if any(s != k for s, k in zip(shown, keys, strict=False)):
            notes.append(f"keys longer than {self.limits.max_value_bytes} bytes are cut")
        if notes:
            result["truncated"] = "; ".join(notes)
        return result

    async def _search(self, scope: Scope, args: _Search) -> dict[str, JsonValue]:
        limit = self._limit(args.limit)
        # One more than shown tells whether there were more; two more again in
        # case the history and the standing decisions are among them. Asked again
        # for more while kept keys crowd memory out (the global index of
        # conversations can hold thousands that match).
        asked = limit + 3
        while True:
            found = await self.state.search(scope, args.query, asked)
            hits = [hit for hit in found if not kept_by_loop(scope, hit.key)]
            if len(hits) > limit or len(found) < asked or asked >= _MOST_SEARCHED:
                break
            asked *= 4
        results: list[JsonValue] = [
            {
                "key": self._short(hit.key),
                "score": round(hit.score, 3),
                "snippet": None if hit.snippet is None else self._short(hit.snippet),
            }
            for hit in hits[:limit]
        ]
        result: dict[str, JsonValue] = {"query": args.query, "results": results}
        if len(hits) > limit:
            result["truncated"] = f"more matches exist; showing the best {limit}"
        return result

    def _short(self, text: str) -> str:
        return _cut(text, self.limits.max_value_bytes)


def _cut(text: str, most: int) -> str:
    """Return `text` cut to at most `most` UTF-8 bytes, never inside a character."""
    data = text.encode()
    if len(data) <= most:
        return text
    return data[: most - 3].decode(errors="ignore") + "…"


def _refuse_kept_by_loop(scope: Scope, key: str) -> None:
    held = kept_by_loop(scope, key)
    if held is None:
        return
    also = "; the conversation so far is already in front of you" if key == HISTORY_KEY else ""
    raise MemoryNotGrantedError(f"Refused: the key {key!r} holds {held}, which is not memory{also}")


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
    )
