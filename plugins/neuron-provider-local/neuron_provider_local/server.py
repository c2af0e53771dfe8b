"""`EmbeddedServer`: llama.cpp's OpenAI-compatible server (xllamacpp) on loopback, in a child.

Why a child process rather than a worker thread: xllamacpp's `Server(...)`
holds the GIL for the whole model load (2 to 3 s here, far more under CPU
contention), so even from a thread it would freeze the event loop. In a
child the load runs in parallel and the loop only awaits one line on a pipe
(read in a thread, which releases the GIL). The child also cannot outlive
us: it serves until its stdin closes, which the OS does when we exit or die.

Loopback is not private: any local user (or a web page, through the
browser) can reach the port. So each server gets a fresh secret API key,
which only this process knows and sends, and serves no CORS and no web UI.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from .errors import ServerStartError

__all__ = ["DEFAULT_START_TIMEOUT", "EmbeddedServer", "ServerSettings"]

logger = logging.getLogger("neuron_provider_local")

DEFAULT_START_TIMEOUT: Final = 300.0
"""Seconds to wait for the model to load (2 to 3 s on an idle machine)."""
_STOP_TIMEOUT: Final = 10.0
_LOG_TAIL: Final = 2000


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSettings:
    """How to run the embedded server."""

    model: Path
    """The GGUF file to load."""
    alias: str
    """The model name the server reports in its answers."""
    chat_template: str
    """The Jinja chat template that renders requests into the model's prompt."""
    context_size: int = 8192
    """The context window in tokens (prompt and answer together)."""
    threads: int | None = None
    """CPU threads for generation; None: one per physical core."""

    def as_json(self) -> dict[str, str | int | None]:
        """The settings line the child process reads."""
        return {
            "model": str(self.model),
            "alias": self.alias,
            "chat_template": self.chat_template,
            "context_size": self.context_size,
            "threads": self.threads,
        }


class EmbeddedServer:
    """A running embedded server; `start` it, use `base_url`, then `stop` it.

    A server still running at interpreter exit is stopped by an `atexit` hook.
    """

    def __init__(
        self, process: subprocess.Popen[bytes], address: str, log: IO[bytes], *, api_key: str
    ) -> None:
        """Wrap a started child; use `EmbeddedServer.start` instead."""
        self._process = process
        self._log = log
        self.address: Final = address
        """The server's root URL, `http://127.0.0.1:<port>`."""
        self.api_key: Final = api_key
        """The secret every request must carry (`Authorization: Bearer ...`); never shown."""
        atexit.register(self.stop_now)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"EmbeddedServer(address={self.address!r}, pid={self.pid}, {state})"

    @classmethod
    async def start(
        cls, settings: ServerSettings, *, timeout: float = DEFAULT_START_TIMEOUT
    ) -> EmbeddedServer:
        """Start a server for `settings` and return once it answers requests.

        Raises:
            ServerStartError: the model did not load (the message quotes the
                server's log) or took longer than `timeout` seconds.
        """
        api_key = secrets.token_urlsafe(32)
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(
            [sys.executable, "-m", "neuron_provider_local._serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            # Out of the terminal's process group: Ctrl-C interrupts the program, which
            # then stops the server itself, instead of killing the server mid-request.
            start_new_session=True,
        )
        try:
            address = await _ready_address(process, settings, api_key, log, timeout=timeout)
        except BaseException:
            _kill(process)
            log.close()
            raise
        logger.info("embedded server for %s at %s (pid %d)", settings.alias, address, process.pid)
        return cls(process, address, log, api_key=api_key)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root, `http://127.0.0.1:<port>/v1`."""
        return f"{self.address}/v1"

    @property
    def pid(self) -> int:
        """The child process's id."""
        return self._process.pid

    @property
    def running(self) -> bool:
        """Whether the server process is still alive."""
        return self._process.poll() is None

    async def stop(self) -> None:
        """Stop the server and wait for its process to end (in a thread: it may take a moment)."""
        await asyncio.to_thread(self.stop_now)

    def stop_now(self) -> None:
        """Stop the server, blocking until its process ends; safe to call twice."""
        atexit.unregister(self.stop_now)
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()  # the child's cue to stop its server and exit
        try:
            process.wait(timeout=_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill(process)
        if process.stdout is not None:
            process.stdout.close()
        self._log.close()


async def _ready_address(
    process: subprocess.Popen[bytes],
    settings: ServerSettings,
    api_key: str,
    log: IO[bytes],
    *,
    timeout: float,
) -> str:
    assert process.stdin is not None and process.stdout is not None  # both are pipes
    settings_line = settings.as_json() | {"api_key": api_key}
    process.stdin.write(json.dumps(settings_line).encode() + b"\n")
    process.stdin.flush()
    try:
        # The child answers once the model is loaded; a blocking read in a thread
        # waits on that real event. A timeout kills the child, which ends the read.
        line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), timeout)
    except TimeoutError:
        raise ServerStartError(
            f"the embedded server did not load {settings.model} within {timeout:g} s"
        ) from None
    answer = _parse_answer(line)
    if "address" in answer:
        return answer["address"]
    await asyncio.to_thread(_wait_briefly, process)
    reason = answer.get("error") or f"its process exited with status {process.returncode}"
    raise ServerStartError(
        f"the embedded server could not load {settings.model}: {reason}{_tail(log)}"
    )


def _parse_answer(line: bytes) -> dict[str, str]:
    try:
        answer = json.loads(line) if line.strip() else {}
    except ValueError:
        return {"error": f"unexpected output {line[:200]!r}"}
    if not isinstance(answer, dict):
        return {"error": f"unexpected output {line[:200]!r}"}
    return {str(key): str(value) for key, value in answer.items()}


def _wait_briefly(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill(process)


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    text = log.read().decode("utf-8", errors="replace").strip()
    return f"; server log: {text[-_LOG_TAIL:]}" if text else ""


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()
