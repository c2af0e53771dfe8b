"""MCP servers declared by plugins: tools from a manifest, started on their first call."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pluggy
import pytest

from neuron_tool import ToolRegistrationError, ToolRegistry
from neuron_tool.mcp import MCPClient, MCPConnectionError
from neuron_tool.tool import ToolDyn
from neuron_turn.plugins import hookspecs
from neuron_turn.plugins.hookspecs import RegisterTool, hookimpl

from .mcp_servers.paths import script_client

# What `await client.fetch_manifest()` gives for two of the toolbox's tools.
MANIFEST: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"title": "Echo", "readOnlyHint": True, "idempotentHint": True},
    },
    {
        "name": "pid",
        "description": "The server's process id.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
]


class ToolboxPlugin:
    """A plugin offering an MCP server's tools; the server starts on the first call."""

    def __init__(self) -> None:
        self.server = script_client("toolbox", name="toolbox", prefix="toolbox_")

    @hookimpl
    def register_tools(self, register: RegisterTool) -> None:
        for tool in self.server.tools_from_manifest(MANIFEST):
            register(tool)


def _registry_from(plugin: object) -> ToolRegistry:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(plugin)
    registry = ToolRegistry()
    manager.hook.register_tools(register=registry.register)
    return registry


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_plugin_registers_a_servers_tools_and_each_event_loop_gets_its_own_session() -> None:
    registry = _registry_from(ToolboxPlugin())
    assert registry.names() == ["toolbox_echo", "toolbox_pid"]
    assert isinstance(registry.get("toolbox_echo"), ToolDyn)

    async def use() -> int:
        assert await registry.call("toolbox_echo", {"text": "lazy"}) == "lazy"
        pid = await registry.call("toolbox_pid", {})
        assert isinstance(pid, str)
        return int(pid)

    # Nothing closes the server: the end of each `asyncio.run` stops it.
    first = asyncio.run(use())
    assert not _alive(first)
    second = asyncio.run(use())
    assert second != first
    assert not _alive(second)


async def test_tools_from_a_manifest_do_not_start_the_server() -> None:
    client = MCPClient.stdio("/nonexistent/mcp-server", name="later")
    (echo, _) = client.tools_from_manifest(MANIFEST)
    assert echo.name == "echo"
    with pytest.raises(MCPConnectionError, match="cannot connect to MCP server 'later'"):
        await echo.call({"text": "now"})


async def test_a_fetched_manifest_describes_the_same_tools() -> None:
    async with script_client("toolbox", prefix="tb_") as live:
        manifest = await live.fetch_manifest()
        listed = await live.list_tools()
    assert manifest[0] == MANIFEST[0]
    from_manifest = script_client("toolbox", prefix="tb_").tools_from_manifest(manifest)
    for tool, again in zip(listed, from_manifest, strict=True):
        assert (again.name, again.description, again.annotations) == (
            tool.name,
            tool.description,
            tool.annotations,
        )
        assert (again.input_schema, again.output_schema) == (tool.input_schema, tool.output_schema)


async def test_a_bad_manifest_entry_is_a_registration_error() -> None:
    client = MCPClient.stdio("unused")
    with pytest.raises(ToolRegistrationError, match=r"'broken'.*not an MCP tool description"):
        client.tools_from_manifest([{"name": "broken"}])
