"""A listing's pages together are held to `max_response_bytes`, as one answer is: a server
sending page after page of tools, each within the cap, cannot fill the client's memory
(a thousand pages of 8 MiB would be 8 GiB) or keep it parsing them."""

from __future__ import annotations

import pytest

from neuron_tool.mcp import MCPClient, MCPResponseTooLargeError

from .mcp_servers.paths import script

CAP = 64 * 1024


def _client(per_page: int, pages: int) -> MCPClient:
    command, *args = script("pages")
    return MCPClient.stdio(
        command, [*args, str(per_page), str(pages)], name="pages", max_response_bytes=CAP
    )


async def test_pages_each_within_the_cap_but_past_it_together_are_refused() -> None:
    with pytest.raises(MCPResponseTooLargeError) as caught:
        async with _client(per_page=500, pages=100):
            pass
    error = caught.value
    assert (error.what, error.limit) == ("tools/list", CAP)
    assert error.size is not None and CAP < error.size < 2 * CAP
    assert "MCP server 'pages' answered tools/list with" in str(error)


async def test_a_listing_of_many_pages_within_the_cap_arrives_whole() -> None:
    async with _client(per_page=20, pages=10) as client:
        tools = await client.list_tools()
    assert len(tools) == 200
    assert (tools[0].name, tools[-1].name) == ("t0_0", "t9_19")
