"""A server's listings are cached until it says a list changed; then listed again once.

Against a real server over stdio and loopback HTTP speaking MCP 2026-07-28 (which
tells of changes on a `subscriptions/listen` stream) and over stdio speaking
2025-11-25 (which tells unasked).
"""

from __future__ import annotations

import logging
import os
import signal

import pytest

from neuron_tool.mcp import MCPConnectionError, MCPRequestError
from neuron_tool.mcp._listings import Listings

from .changes import MODERN, TRANSPORTS, Heard, changing, counts, names, reopen_with


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


async def test_each_listing_is_asked_once_and_then_served_from_the_cache(transport: str) -> None:
    async with changing(transport) as client:
        tools = names(await client.list_tools())
        for _ in range(3):
            assert names(await client.list_tools()) == tools
            assert [prompt.name for prompt in await client.list_prompts()] == ["greet"]
            assert [r.uri for r in await client.list_resources()] == ["note://current"]
            assert len(await client.list_resource_templates()) == 1
        asked = await counts(client)

    # Connecting lists the tools once; that listing serves list_tools too.
    assert asked == {
        "tools/list": 1,
        "prompts/list": 1,
        "resources/list": 1,
        "resources/templates/list": 1,
    }


async def test_a_tool_the_server_adds_is_listed_once_it_says_its_tools_changed(
    transport: str, heard: Heard
) -> None:
    async with changing(transport) as client:
        assert "fresh" not in names(await client.list_tools())
        await client.call_tool("add_tool", {"name": "fresh"})
        await heard.change("tools")
        assert "fresh" in names(await client.list_tools())
        assert "fresh" in names(await client.list_tools())
        assert (await counts(client))["tools/list"] == 2


async def test_a_tool_listed_earlier_still_calls_the_server_and_a_removed_one_gets_its_error(
    transport: str, heard: Heard
) -> None:
    async with changing(transport) as client:
        await client.call_tool("add_tool", {"name": "doomed"})
        await heard.change("tools")
        earlier = {tool.name: tool for tool in await client.list_tools()}
        await client.call_tool("add_tool", {"name": "other"})
        await heard.change("tools")

        assert await earlier["echo"].call({"text": "still here"}) == "still here"
        assert await earlier["doomed"].call({}) == "doomed"
        await client.call_tool("remove_tool", {"name": "doomed"})
        await heard.change("tools")
        with pytest.raises(MCPRequestError) as caught:
            await earlier["doomed"].call({})
        assert "doomed" not in names(await client.list_tools())

    assert caught.value.message == "Unknown tool: doomed"
    assert caught.value.what == "the call to tool 'doomed'"


async def test_prompts_and_resources_are_listed_again_once_the_server_says_they_changed(
    transport: str, heard: Heard
) -> None:
    async with changing(transport) as client:
        await client.list_prompts()
        await client.list_resources()
        await client.list_resource_templates()

        await client.call_tool("add_prompt", {"name": "fresh"})
        await heard.change("prompts")
        assert [prompt.name for prompt in await client.list_prompts()] == ["greet", "fresh"]
        assert (await client.get_prompt("fresh")).text() == "fresh: hello "

        await client.call_tool("add_resource", {"uri": "note://added"})
        await heard.change("resources")
        listed = [resource.uri for resource in await client.list_resources()]
        await client.list_resource_templates()
        asked = await counts(client)

    assert listed == ["note://current", "note://added"]
    assert asked["prompts/list"] == 2
    # A resources notice covers the templates too: MCP has none of its own for them.
    assert asked["resources/list"] == asked["resources/templates/list"] == 2


async def test_without_cache_lists_every_listing_asks_the_server(transport: str) -> None:
    async with changing(transport, cache_lists=False) as client:
        for _ in range(3):
            await client.list_tools()
            await client.list_prompts()
        asked = await counts(client)

    assert (asked["tools/list"], asked["prompts/list"]) == (4, 3)


async def test_a_change_the_server_does_not_tell_is_listed_after_invalidate_cache(
    transport: str,
) -> None:
    async with changing(transport, quiet=True) as client:
        await client.call_tool("add_tool", {"name": "unsaid"})
        assert "unsaid" not in names(await client.list_tools())

        client.invalidate_cache()

        assert "unsaid" in names(await client.list_tools())


@pytest.mark.parametrize("transport", ["stdio", "legacy"])
async def test_a_restarted_server_is_listed_anew_not_from_the_last_sessions_cache(
    transport: str, heard: Heard
) -> None:
    async with changing(transport) as client:
        await client.call_tool("add_tool", {"name": "fresh"})
        await heard.change("tools")
        assert "fresh" in names(await client.list_tools())
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(MCPConnectionError):
            await client.call_tool("echo", {"text": "anyone?"})

        assert "fresh" not in names(await client.list_tools())


@pytest.mark.parametrize("transport", MODERN)
async def test_while_the_stream_of_list_changes_is_down_listings_are_not_cached(
    transport: str, heard: Heard, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    reopen_with(monkeypatch, first=3600.0, cap=3600.0)  # not reopened before the test ends
    async with changing(transport) as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            await client.call_tool("end_streams", {})
            await heard.unheard()
        await client.list_tools()
        await client.list_tools()
        asked = await counts(client)

    assert asked["tools/list"] == 3
    (ended,) = [r.getMessage() for r in caplog.records if "list changes" in r.getMessage()]
    assert ended.startswith("MCP server 'changing' (")
    assert ended.endswith(
        "its stream of list changes ended (the server ended it); reopening it in 3600 s;"
        " until then its lists are not cached"
    )


def test_a_listing_fetched_while_its_list_changed_is_not_kept() -> None:
    listings = Listings(enabled=True)
    before = listings.generation("tools/list")
    listings.changed("tools")  # heard while the listing was on its way
    listings.keep("tools/list", before, ["stale"])
    assert listings.get("tools/list") is None

    now = listings.generation("tools/list")
    listings.keep("tools/list", now, ["fresh"])
    assert listings.get("tools/list") == ["fresh"]
    listings.changed("prompts")
    assert listings.get("tools/list") == ["fresh"]


def test_a_list_whose_changes_cannot_be_heard_is_never_kept() -> None:
    listings = Listings(enabled=True)
    listings.keep("resources/list", listings.generation("resources/list"), ["kept"])
    listings.unheard(["resources"])
    assert listings.get("resources/list") is None
    listings.keep("resources/templates/list", listings.generation("resources/list"), ["t"])
    assert listings.get("resources/templates/list") is None
