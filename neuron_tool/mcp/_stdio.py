"""`stdio_transport`: an MCP server as a child process, one JSON-RPC message per line.

Our own rather than the SDK's `stdio_client`, for three things that one lacks:
reading a long line costs time in proportion to its length (the SDK joins and
splits the whole line again for every 64 KiB read, so a 20 MB answer took
seconds); no message over the size cap is held in memory; and a server that
never got through the handshake is stopped at once rather than after the grace
period a working one gets. Stopping follows the MCP specification: close its
stdin, wait, then signal its whole process group.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import IO, Final

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from ._response_size import EDGE_BYTES, request_id, too_large_error
from .endpoint import StdioCommand

GRACE_SECONDS: Final = 2.0
"""How long a server may take to exit by itself once its stdin is closed."""
_TERM_SECONDS: Final = 2.0  # after SIGTERM, before SIGKILL
_REAP_SECONDS: Final = 2.0  # after SIGKILL, for the event loop to see the death
# Polling, not `process.wait()`: that also waits for the pipes to close, which a
# grandchild holding them open would put off indefinitely.
_POLL_SECONDS: Final = 0.01

Lost = Callable[[str], None]


@dataclass(slots=True)
class Oversize:
    """A line longer than the limit: its length and both ends, the middle dropped."""

    size: int
    head: bytes
    tail: bytes


@asynccontextmanager
async def stdio_transport(
    command: StdioCommand,
    *,
    stderr: IO[str],
    max_message_bytes: int,
    on_lost: Lost,
    grace: Callable[[], float],
) -> AsyncIterator[TransportStreams]:
    """Start `command` and yield the session's streams; leaving stops the process.

    `on_lost` is called with the reason when the server's stdout ends or carries
    something that is not JSON-RPC, before the session sees its stream end.
    `grace()` says, when leaving, how long the server may take to exit by itself.
    """
    env = get_default_environment() | dict(command.env or {})
    process = await anyio.open_process(
        [command.command, *command.args],
        env=env,
        cwd=command.cwd,
        stderr=stderr,
        start_new_session=True,  # its own process group, so stopping it reaches its children
    )
    sink, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outbox = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(_read, process, sink, max_message_bytes, on_lost)
        task_group.start_soon(_write, process, outbox, sink, on_lost)
        try:
            yield read_stream, write_stream
        finally:
            # Stopping must finish even if the caller is cancelled, or the child would leak.
            with anyio.CancelScope(shield=True):
                read_stream.close()  # a reader blocked on delivery goes on to drain stdout
                write_stream.close()
                await _stop(process, grace())
            task_group.cancel_scope.cancel()


async def _read(
    process: anyio.abc.Process,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    limit: int,
    on_lost: Lost,
) -> None:
    assert process.stdout is not None
    delivering = True
    with sink:
        async for line in _lines(process.stdout, limit):
            if not delivering:
                continue  # drain, so a server blocked writing can see its stdin close
            message = _message(line, limit, on_lost)
            if message is None:
                return
            try:
                await sink.send(message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                delivering = False
        # Before the sink closes: the session must find the reason set when its stream ends.
        on_lost("its process exited")


def _message(line: bytes | Oversize, limit: int, on_lost: Lost) -> SessionMessage | None:
    """The session message for one line, or `None` (after `on_lost`) if the session cannot go on."""
    if isinstance(line, Oversize):
        request = request_id(line.head, line.tail)
        if request is None:
            on_lost(
                f"it sent a message of {line.size} bytes, more than max_response_bytes"
                f" ({limit}), that answers no request it can be matched with"
            )
            return None
        return SessionMessage(too_large_error(request, line.size, limit))
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        shown = line[:200].decode("utf-8", "replace")
        on_lost(f"it wrote something that is not JSON-RPC to stdout: {shown!r}")
        return None


async def _lines(
    stream: anyio.abc.ByteReceiveStream, limit: int
) -> AsyncIterator[bytes | Oversize]:
    """The non-blank lines of `stream`; those longer than `limit` bytes come as `Oversize`.

    Each byte is looked at a bounded number of times, and a line is joined
    once, so the cost is linear in its length.
    """
    line = _Line(limit)
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        while True:
            chunk = await stream.receive()
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                line.add(chunk[start:end])
                finished, line = line.finish(), _Line(limit)
                if finished is not None:
                    yield finished
                start = end + 1
            line.add(chunk[start:])


class _Line:
    """One line as it arrives: its pieces while it fits the limit, only its ends after."""

    __slots__ = ("head", "limit", "pieces", "size", "tail")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pieces: list[bytes] = []
        self.size = 0
        self.head = b""
        self.tail = b""

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        self.size += len(piece)
        if self.size <= self.limit:
            self.pieces.append(piece)
            return
        if self.pieces:  # just went over: keep the ends, drop the rest
            joined = b"".join(self.pieces)
            self.head, self.tail, self.pieces = joined[:EDGE_BYTES], joined[-EDGE_BYTES:], []
        if len(self.head) < EDGE_BYTES:
            self.head += piece[: EDGE_BYTES - len(self.head)]
        self.tail = (self.tail + piece[-EDGE_BYTES:])[-EDGE_BYTES:]

    def finish(self) -> bytes | Oversize | None:
        if self.size > self.limit:
            return Oversize(self.size, self.head, self.tail)
        line = b"".join(self.pieces)
        return line if line.strip() else None


async def _write(
    process: anyio.abc.Process,
    outbox: MemoryObjectReceiveStream[SessionMessage],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    on_lost: Lost,
) -> None:
    assert process.stdin is not None
    with outbox:
        try:
            async for message in outbox:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(data.encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            # It may still be running, but a request it cannot read would hang.
            on_lost(f"its stdin could not be written ({type(exc).__name__})")
            sink.close()


async def _stop(process: anyio.abc.Process, grace: float) -> None:
    """Close its stdin, give it `grace` seconds to exit, then SIGTERM and SIGKILL its group."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, grace):
        _signal_group(process, signal.SIGTERM)
        if not await _exited(process, _TERM_SECONDS):
            _signal_group(process, signal.SIGKILL)
            await _exited(process, _REAP_SECONDS)
    # Its children may outlive it; they are in its group, and go with it.
    _signal_group(process, signal.SIGKILL)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    with anyio.move_on_after(_REAP_SECONDS):  # only a process that survived SIGKILL runs it out
        await process.aclose()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(_POLL_SECONDS)
        return True
    return False


def _signal_group(process: anyio.abc.Process, signum: signal.Signals) -> None:
    # The leader's pid is the group id (start_new_session); ESRCH means all are gone.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)
