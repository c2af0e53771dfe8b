"""Tools that probe an environment's boundaries from inside the child's own process.

Registered by recipes (`TurnRecipe(plugins=(__name__,))`), never installed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess

from neuron_tool import ToolReturn, image_block, tool
from neuron_turn import RegisterTool, hookimpl


@tool
def read_file(path: str) -> str:
    """Return the text of the file at `path`."""
    with open(path) as file:
        return file.read()


@tool
def read_env(name: str) -> str:
    """Return the value of environment variable `name`, or `<unset>`."""
    return os.environ.get(name, "<unset>")


@tool
def connect(port: int) -> str:
    """Open a TCP connection to 127.0.0.1:`port`."""
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return "connected"


@tool
def spin() -> str:
    """Loop forever, using CPU."""
    while True:
        pass


@tool
def hog(megabytes: int) -> int:
    """Allocate `megabytes` of memory."""
    return len(bytearray(megabytes * 1024 * 1024))


@tool
async def hang(port: int = 0) -> str:
    """Start a detached `sleep` that leaves the process group, then wait forever.

    With a `port`, first send the sleeper's pid to 127.0.0.1:`port`.
    """
    sleeper = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    if port:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"{sleeper.pid}\n".encode())
        await writer.drain()
        writer.close()
    await asyncio.Event().wait()
    return "unreachable"


@tool
def crash() -> str:
    """Kill the process this runs in."""
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


PIXEL = b"\x89PNG\r\n\x1a\n tiny"
"""The bytes of the image `screenshot` returns."""


@tool
def screenshot() -> ToolReturn:
    """Return a (tiny) screenshot with the result's text."""
    return ToolReturn("took it", files=[image_block(PIXEL, media_type="image/png")])


@tool(strict=True)
def strict_echo(text: str, times: int = 1) -> str:
    """Return `text`, `times` times: a strict tool."""
    return text * times


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer the probes."""
    for probe in (read_file, read_env, connect, spin, hog, hang, crash, screenshot, strict_echo):
        register(probe)
