"""The parent's side of a child run: start it, serve its calls, bound it in time, end it.

Whatever happens (a result, a crash, a deadline, a cancellation), every
process the child started is stopped and killed before `supervise` returns,
and its outcome becomes a `TurnOutput` or one clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from layer0 import Scope, SessionId, SessionScope, StateReader, TurnOutput
from neuron_turn import HostedTool, Provider, ProviderRequest
from neuron_turn.loop.strict_tools import check_strict_tools
from neuron_turn.loop.thinking import Thinking

from ._channel import MAX_LINE, ChannelError, read_message, write_message
from ._procfs import end_tree, holders, live, processes_of
from ._wire import WireError, decode_error, decode_request, encode_error, encode_response
from .errors import ChildFailedError, LimitExceededError

__all__ = ["MAX_CALLS", "Launch", "supervise"]

_SCOPE: Final[TypeAdapter[Any]] = TypeAdapter(Scope)
_TAIL: Final = 4000
_REAP_POLLS: Final = 2000
_REDACTED: Final = "[REDACTED]"
_CHILD_EXTRA: Final = frozenset({"metadata"})
_STDERR_GRACE: Final = 0.5
"""Seconds the end of the child's stderr is waited for after the sweep, before its holders die."""
MAX_CALLS: Final = 32
"""The most calls of one child the parent serves at once (model calls, state reads)."""


@dataclass(frozen=True, kw_only=True)
class Launch:
    """How to start one child, and what the parent needs to judge how it ended."""

    argv: Sequence[str]
    env: dict[str, str] = field(repr=False)
    cwd: str
    label: str
    wall_clock: float | None
    cpu_seconds: float | None
    memory_bytes: int | None
    uid: int | None = None
    """The uid the child drops to; its processes are swept too."""
    signal_as_status: bool = False
    """bubblewrap reports a child killed by signal N as exit status 128 + N."""
    secrets: Sequence[str] = field(default=(), repr=False)
    """Values to blank out of the child's stderr before it reaches an error message."""


class _Server:
    """Answers the child's calls: the parent's provider, and reads of the input's session."""

    def __init__(
        self,
        provider: Provider,
        state: StateReader | None,
        session: SessionId | None,
        hosted_tools: frozenset[HostedTool] = frozenset(),
        thinking: Thinking | None = None,
    ) -> None:
        self.provider = provider
        self.state = state
        self.session = session
        self.hosted_tools = hosted_tools
        self.thinking = thinking
        self.lock = asyncio.Lock()

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[str, Any] | None:
        """Serve calls until the child sends its result (returned) or closes the channel."""
        calls: set[asyncio.Task[None]] = set()
        # Each call served holds its answer until the child reads it: past MAX_CALLS at once,
        # the next is not read until one ends, so a child that reads no reply stalls itself.
        slots = asyncio.Semaphore(MAX_CALLS)
        try:
            while (message := await read_message(reader)) is not None:
                kind, body = message
                if kind in ("output", "failed"):
                    return kind, body
                if kind != "call" or not isinstance(body, dict):
                    raise ChannelError(f"unexpected message {kind!r}")
                await slots.acquire()
                task = asyncio.create_task(self._answer(writer, body))
                calls.add(task)
                task.add_done_callback(calls.discard)
                task.add_done_callback(lambda _: slots.release())
            return None
        finally:
            for task in calls:
                task.cancel()

    async def _answer(self, writer: asyncio.StreamWriter, call: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"id": call.get("id")}
        try:
            reply["result"] = await self._call(str(call.get("method")), call.get("params"))
        except Exception as exc:
            reply["error"] = encode_error(exc)
        async with self.lock:
            with contextlib.suppress(ConnectionError):
                try:
                    await write_message(writer, "reply", reply)
                except ChannelError as exc:  # a reply too long to carry: the call fails
                    await write_message(
                        writer, "reply", {"id": reply["id"], "error": encode_error(exc)}
                    )

    async def _call(self, method: str, params: Any) -> Any:
        if method == "complete":
            return encode_response(await self.provider.complete(self._granted(params)))
        if method not in ("read", "list", "search"):
            raise WireError(f"unknown call {method!r}")
        scope = _SCOPE.validate_python(params["scope"])
        if self.session is None or scope != SessionScope(id=self.session):
            raise PermissionError("the child may read only the state of its input's session")
        if self.state is None:
            return None if method == "read" else []
        if method == "read":
            return await self.state.read(scope, str(params["key"]))
        if method == "list":
            return await self.state.list(scope, str(params["prefix"]))
        found = await self.state.search(scope, str(params["query"]), int(params["limit"]))
        return [result.model_dump(mode="json") for result in found]

    def _granted(self, params: Any) -> ProviderRequest:
        """The child's model call, once its hosted tools, thinking and strict tools are granted.

        Hosted tools and thinking must be the recipe's; strict tools need the provider's
        strict mode, which a `prepare` in the child may ask for after the start's check.
        """
        request = decode_request(params)
        # The child's loop puts only the input's trace metadata in `extra`; a provider merges
        # `extra` over the body it builds, so any other key would replace the checked fields.
        unknown = sorted(set(request.extra) - _CHILD_EXTRA)
        if unknown:
            raise PermissionError(
                f"the child's model call sets {', '.join(map(repr, unknown))} in extra, which a "
                "provider would send over the request's own fields; the model call was not made"
            )
        if request.thinking != self.thinking:
            raise PermissionError(
                f"the child asked for thinking={request.thinking!r}, not its recipe's "
                f"{self.thinking!r}; the model call was not made"
            )
        asked = [tool for tool in request.hosted_tools if tool not in self.hosted_tools]
        if asked:
            names = ", ".join(tool.name for tool in asked)
            raise PermissionError(
                f"the child asked for hosted tool(s) {names} beyond its recipe's, or with "
                "other limits; the model call was not made"
            )
        check_strict_tools(request.tools, self.provider)
        return request


async def supervise(
    launch: Launch,
    start: dict[str, Any],
    *,
    provider: Provider,
    state: StateReader | None,
    session: SessionId | None,
    hosted_tools: Collection[HostedTool] = (),
    thinking: Thinking | None = None,
) -> TurnOutput:
    """Run the child `launch` describes on `start`, serving `provider` and `state` to it.

    The child's model calls may offer only `hosted_tools`, as they are, and must ask
    for `thinking`.

    Raises:
        LimitExceededError: the child overran its CPU time, memory or wall clock.
        ChildFailedError: it crashed, was killed, or broke the channel's protocol.
        layer0.TurnError: the turn inside failed (the same class as in-process).
    """
    # stderr is a pipe of our own, so its end can be given up on (see `_read_to_end`).
    stderr_in, stderr_out = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr_out,
            env=launch.env,
            cwd=launch.cwd,
            start_new_session=True,
            limit=MAX_LINE,
        )
    except BaseException:
        os.close(stderr_in)
        raise
    finally:
        os.close(stderr_out)
    assert process.stdin is not None and process.stdout is not None
    # Kept longer by the longest secret, so one the tail's start cuts is still blanked whole.
    longest = max((len(secret.encode()) for secret in launch.secrets), default=0)
    tail = _Tail(_TAIL + longest)
    stderr_pipe = os.fstat(stderr_in).st_ino
    stderr = asyncio.StreamReader()
    stderr_transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stderr), os.fdopen(stderr_in, "rb", buffering=0)
    )
    reading = asyncio.create_task(tail.read(stderr))
    server = _Server(provider, state, session, frozenset(hosted_tools), thinking)
    result: tuple[str, Any] | None = None
    problem: str | None = None
    timed_out = False
    try:
        async with asyncio.timeout(launch.wall_clock):
            await write_message(process.stdin, "start", start)
            result = await server.serve(process.stdout, process.stdin)
    except TimeoutError:
        timed_out = True
    except ChannelError as exc:
        problem = f"the child broke the channel: {exc}"
    except ConnectionError:
        pass  # The child closed its end; how it ended (below) says why.
    finally:
        await _end(process, launch.uid)
        await _read_to_end(reading, stderr_pipe)
        stderr_transport.close()
    shown = _last(_redact(tail.text(), launch.secrets), _TAIL)
    return _outcome(launch, result, problem, timed_out, process.returncode, shown)


async def _end(process: asyncio.subprocess.Process, uid: int | None) -> None:
    """Kill the child and everything below it (and its uid's processes); wait until gone."""
    killed = await end_tree(process.pid)
    await process.wait()
    await _gone(killed, uid)


async def _gone(killed: set[int], uid: int | None = None) -> None:
    """Kill `killed` (and `uid`'s processes) again until none runs."""
    for _ in range(_REAP_POLLS):
        remaining = live(killed) | (processes_of(uid) if uid is not None else set())
        if not remaining:
            return
        for pid in remaining:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.005)


class _Tail:
    """The last `size` bytes of a stream, kept as they are read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept = b""

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.kept = (self.kept + chunk)[-self.size :]

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


async def _read_to_end(reading: asyncio.Task[None], pipe: int) -> None:
    """Wait for the end of the child's stderr, killing what still holds it open.

    Once the sweep is done, only a process that escaped it can hold the pipe: one
    orphaned before the sweep (its parent gone) in a session of its own is no
    descendant of the child any more. Waiting for it would wait as long as it runs.
    """
    killed: set[int] = set()
    for _ in range(2):
        done, _ = await asyncio.wait({reading}, timeout=_STDERR_GRACE)
        if done:
            break
        killed |= holders(pipe) - {os.getpid()}
        await _gone(killed)
    else:
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading


def _last(text: str, size: int) -> str:
    """The last `size` characters of `text`, or a few more to keep a blanked secret's mark whole."""
    start = max(0, len(text) - size)
    width = len(_REDACTED)
    mark = text.rfind(_REDACTED, max(0, start - width + 1), start + width - 1)
    return text[mark if 0 <= mark < start else start :]


def _redact(text: str, secrets: Sequence[str]) -> str:
    # Longest first: a secret inside another would otherwise leave the rest of the longer one.
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, _REDACTED)
    return text


def _outcome(
    launch: Launch,
    result: tuple[str, Any] | None,
    problem: str | None,
    timed_out: bool,
    returncode: int | None,
    stderr: str,
) -> TurnOutput:
    if timed_out:
        raise LimitExceededError(
            "wall_clock",
            f"{launch.label}: the turn ran past its wall-clock limit of "
            f"{launch.wall_clock:g}s and was stopped",
        )
    if result is not None:
        kind, body = result
        if kind == "failed" and isinstance(body, dict):
            message = _redact(str(body.get("message", "")), launch.secrets)
            raise decode_error({**body, "message": message}, fallback=ChildFailedError)
        try:
            return TurnOutput.model_validate(body)
        except ValidationError as exc:
            problem = f"the child sent an output that is not a layer0 TurnOutput: {exc}"
    raise _failure(launch, problem and _redact(problem, launch.secrets), returncode, stderr)


def _failure(launch: Launch, problem: str | None, returncode: int | None, stderr: str) -> Exception:
    signum = _signal_of(returncode, as_status=launch.signal_as_status)
    # Without a limit, SIGXCPU or a MemoryError is no limit's doing: a process inside can
    # send the child SIGXCPU, and the machine itself can run out of memory.
    if signum == signal.SIGXCPU and launch.cpu_seconds is not None:
        return LimitExceededError(
            "cpu",
            f"{launch.label}: the turn used more than its CPU-time limit of "
            f"{launch.cpu_seconds:g}s and was killed (SIGXCPU)",
        )
    if launch.memory_bytes is not None and (
        "MemoryError" in stderr or "Cannot allocate memory" in stderr
    ):
        return LimitExceededError(
            "memory",
            f"{launch.label}: the turn ran out of its memory limit of "
            f"{launch.memory_bytes} bytes and stopped",
        )
    if problem is None:
        how = f"was killed by {signal.Signals(signum).name}" if signum else f"exited ({returncode})"
        problem = f"the child {how} before it sent a result"
    return ChildFailedError(f"{launch.label}: {problem}", returncode=returncode, stderr=stderr)


def _signal_of(returncode: int | None, *, as_status: bool) -> int | None:
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    if as_status and 128 < returncode < 128 + 65:
        return returncode - 128
    return None
