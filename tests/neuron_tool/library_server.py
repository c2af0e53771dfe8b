"""The library test server's client, shared by the prompts and resources tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

from neuron_tool.mcp import MCPClient

from .mcp_servers.paths import script, script_client

TIMEOUT: Final = 1.0
"""Seconds a request may take: the library server answers at once, save its hang."""
CAP: Final = 64 * 1024
"""A response size cap small enough for the library's large resource to pass."""


async def library_client() -> AsyncIterator[MCPClient]:
    """One client of the library server, for a test module's `library` fixture."""
    async with script_client("library", name="library", timeout=TIMEOUT) as client:
        yield client


def hostile(mode: str) -> MCPClient:
    """A client of the hand-written hostile peer, answering as `mode` says."""
    command, *args = script("hostile")
    return MCPClient.stdio(command, [*args, mode], name="hostile", timeout=TIMEOUT)
