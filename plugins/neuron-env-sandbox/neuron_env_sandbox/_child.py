"""The child's side: apply the limits, build the turn from plugins, run it, report back.

Run by the parent as `python -I -m neuron_env_sandbox._child SETTINGS` (JSON:
`rlimits`, `drop_to`, `isolation`, `sys_path`). Before anything of the
turn's runs, the child sets its rlimits, makes itself the subreaper of what
it starts (so the parent can find every descendant), makes itself not
dumpable (code it starts cannot reach its channel or memory through /proc),
moves the channel off stdin/stdout (a tool that prints cannot corrupt it),
and, when the parent asked, drops to an unprivileged uid. The provider and state reads are the
parent's, reached over the channel.
"""

from __future__ import annotations

import asyncio
import builtins
import ctypes
import json
import os
import resource
import sys
from collections.abc import Sequence
from typing import Any, Final

from pydantic import JsonValue, TypeAdapter

from layer0 import Scope, SearchResult, SessionScope, StateError, TurnInput
from neuron_tool import mark_isolated
from neuron_turn import (
    NeuronTurn,
    ProviderRequest,
    ProviderResponse,
    RegisterProvider,
    hookimpl,
)
from neuron_turn.loop.hosted_tools import IMAGE_OPTIONS

from ._channel import MAX_LINE, ChannelError, read_message, write_message
from ._wire import decode_error, decode_response, encode_error, encode_request
from .limits import LARGEST
from .recipe import TurnRecipe

__all__ = ["PARENT_PROVIDER", "main"]

PARENT_PROVIDER: Final = "env-parent"
"""The provider name under which the child's turn reaches the parent's provider."""

_PR_SET_CHILD_SUBREAPER: Final = 36
_PR_SET_DUMPABLE: Final = 4
_SCOPE: Final[TypeAdapter[Any]] = TypeAdapter(Scope)
_SEARCH: Final[TypeAdapter[list[SearchResult]]] = TypeAdapter(list[SearchResult])


class _ParentError(RuntimeError):
    """The parent answered a call with an error of a class the child does not rebuild."""


class _Parent:
    """Calls into the parent over the channel; replies are matched to calls by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._next = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._pump: asyncio.Task[None] | None = None
        self._ended: BaseException | None = None
        """Why no reply can come any more (the channel closed, or a reply unreadable)."""

    async def start(self) -> Any:
        message = await read_message(self.reader)
        if message is None or message[0] != "start":
            raise _ParentError("the parent did not send `start` first")
        self._pump = asyncio.create_task(self._replies())
        return message[1]

    async def call(self, method: str, params: JsonValue) -> Any:
        if self._ended is not None:
            raise self._ended
        self._next += 1
        number = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        try:
            await write_message(
                self.writer, "call", {"id": number, "method": method, "params": params}
            )
            return await future
        finally:
            # Answered, failed or cancelled (a tool's timeout): its late reply is dropped.
            self._waiting.pop(number, None)

    async def _replies(self) -> None:
        ended: BaseException = _ParentError("the parent closed the channel")
        try:
            while (message := await read_message(self.reader)) is not None:
                kind, body = message
                future = self._waiting.pop(body["id"], None) if kind == "reply" else None
                if future is None or future.done():
                    continue  # a call the child gave up on: its reply comes too late
                if "error" in body:
                    future.set_exception(decode_error(body["error"], fallback=_ParentError))
                else:
                    future.set_result(body["result"])
        except (ChannelError, KeyError, TypeError) as exc:
            # A reply that cannot be read (too long, not JSON) fails the calls waiting on it
            # and every later one, never leaves them waiting until a time limit says else.
            ended = _ParentError(f"a reply from the parent could not be read: {exc}")
        finally:
            self._ended = ended
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ended)
            self._waiting.clear()


class _ParentProvider:
    """The parent's provider, one channel call per model call."""

    def __init__(self, parent: _Parent, recipe: TurnRecipe) -> None:
        self.parent = parent
        # The recipe's: the parent checked, before it started the child, that its
        # provider runs them (and takes the recipe's thinking and sampling settings).
        self.hosted_tools = frozenset(tool.name for tool in recipe.hosted_tools)
        self.takes_thinking = recipe.thinking is not None
        self.takes_sampling = frozenset() if recipe.sampling is None else recipe.sampling.names
        self.approves_hosted_calls = any(
            getattr(tool, "require_approval", False) for tool in recipe.hosted_tools
        )
        # The parent holds each call's strict tools to its own provider's strict mode, and
        # the recipe's image settings to what its provider takes: the child takes them all.
        self.takes_strict_tools = True
        self.image_generation_takes = dict.fromkeys(IMAGE_OPTIONS)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return decode_response(await self.parent.call("complete", encode_request(request)))


class _ParentState:
    """The parent's state, read-only (the parent serves only the input's session).

    A read of another scope is refused here first, in words the model can act
    on; the parent refuses it too, whatever the child asks.
    """

    def __init__(self, parent: _Parent, session: str | None) -> None:
        self.parent = parent
        self.session = session

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        return await self._call("read", scope, key=key)  # type: ignore[no-any-return]

    async def list(self, scope: Scope, prefix: str) -> list[str]:
        return [str(k) for k in await self._call("list", scope, prefix=prefix)]

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        found = await self._call("search", scope, query=query, limit=limit)
        return _SEARCH.validate_python(found)

    async def _call(self, method: str, scope: Scope, **params: JsonValue) -> Any:
        if self.session is None or scope != SessionScope(id=self.session):
            own = "no session" if self.session is None else f"session {self.session!r}"
            raise StateError(
                f"this turn runs in a sandbox, which serves only the memory of its own "
                f"session (here: {own}), whatever else the caller granted"
            )
        return await self.parent.call(
            method, {"scope": _SCOPE.dump_python(scope, mode="json"), **params}
        )


class _ParentPlugin:
    """Registers the parent's provider in the child's plugin manager."""

    def __init__(self, parent: _Parent, recipe: TurnRecipe) -> None:
        self.parent = parent
        self.recipe = recipe

    @hookimpl
    def register_providers(self, register: RegisterProvider) -> None:
        register(
            PARENT_PROVIDER,
            lambda model, **options: _ParentProvider(self.parent, self.recipe),
        )


def main(argv: Sequence[str] = sys.argv) -> int:
    """Run one turn as the parent's child; the exit status is 0 once a result was sent."""
    settings = json.loads(argv[1])
    _apply_rlimits(settings["rlimits"])
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Not dumpable: code the turn starts runs as this process's user (bubblewrap started by
    # a user keeps it), and could otherwise open its channel through /proc/<pid>/fd and
    # forge messages, or its memory through /proc/<pid>/mem; nor is its memory core-dumped.
    _not_dumpable()
    channel_in, channel_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    sys.path.extend(settings["sys_path"])
    return asyncio.run(_serve(settings, channel_in, channel_out))


def _apply_rlimits(rlimits: dict[str, int]) -> None:
    for name, value in rlimits.items():
        which = getattr(resource, name)
        # CPU: SIGXCPU at the soft limit, SIGKILL one second later if it is caught.
        hard = min(value + 1, LARGEST) if name == "RLIMIT_CPU" else value
        resource.setrlimit(which, (value, hard))


async def _serve(settings: dict[str, Any], channel_in: int, channel_out: int) -> int:
    reader, writer = await _open_channel(channel_in, channel_out)
    parent = _Parent(reader, writer)
    start = await parent.start()
    try:
        turn, turn_input = _build(start, parent)
        if settings["drop_to"] is not None:
            _drop_privileges(int(settings["drop_to"]))
        if settings["isolation"]:
            mark_isolated(settings["isolation"])
        output = await turn.execute(turn_input)
    except Exception as exc:
        await write_message(writer, "failed", encode_error(exc))
    else:
        await write_message(writer, "output", output.model_dump(mode="json"))
    writer.close()
    return 0


def _build(start: dict[str, Any], parent: _Parent) -> tuple[NeuronTurn, TurnInput]:
    recipe = TurnRecipe.model_validate(start["recipe"])
    turn_input = TurnInput.model_validate(start["input"])
    manager = recipe.plugin_manager()
    manager.register(_ParentPlugin(parent, recipe), name=PARENT_PROVIDER)
    model = f"{PARENT_PROVIDER}:{recipe.model.partition(':')[2]}"
    state = _ParentState(parent, turn_input.session)
    return recipe.build(manager=manager, state=state, model=model), turn_input


async def _open_channel(
    channel_in: int, channel_out: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(channel_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
        os.fdopen(channel_out, "wb", buffering=0),
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise PermissionError(f"could not drop to uid {uid}")
    _not_dumpable()  # A uid change sets it from fs.suid_dumpable, which may be 2.


def _not_dumpable() -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


if __name__ == "__main__":
    sys.exit(main())
