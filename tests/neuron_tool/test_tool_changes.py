"""`ToolChanges`: a source's word that its tools changed, told to each listener."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from neuron_tool import RunContext, ToolDyn, filtered_tools, prefixed_tools, tool_source
from neuron_tool.mcp import MCPClient, MCPListChange
from neuron_tool.source import ToolChanges, tool_changes_of


def test_each_listener_is_told_until_it_stops() -> None:
    changes = ToolChanges()
    heard: list[str] = []
    stop_a = changes.listen(lambda: heard.append("a"))
    changes.listen(lambda: heard.append("b"))

    changes.changed()
    stop_a()
    stop_a()  # stopping twice is harmless
    changes.changed()

    assert heard == ["a", "b", "b"]


def test_a_listener_that_raises_is_logged_and_the_others_are_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes = ToolChanges()
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    changes.listen(broken)
    changes.listen(lambda: heard.append("told"))
    with caplog.at_level(logging.ERROR):
        changes.changed()

    assert heard == ["told"]
    assert "a listener of tool changes raised" in caplog.text


async def test_as_an_on_list_changed_handler_only_a_change_of_tools_is_one() -> None:
    changes = ToolChanges()
    heard: list[None] = []
    changes.listen(lambda: heard.append(None))

    await changes(MCPListChange("docs", "prompts"))
    await changes(MCPListChange("docs", "resources"))
    assert heard == []
    await changes(MCPListChange("docs", "tools"))
    assert heard == [None]


def test_a_sources_changes_are_found_through_its_views_and_every_mcp_client_has_them() -> None:
    changes = ToolChanges()
    client = MCPClient.stdio("never-started")  # nothing starts yet

    class Own:
        tool_changes = changes

        async def tools_for(self, context: RunContext[Any]) -> list[ToolDyn]:
            return []

    @tool_source
    def plain(ctx: RunContext[None]) -> list[ToolDyn]:
        return []

    viewed = prefixed_tools(filtered_tools(client, allow=["a"]), "x_")
    assert tool_changes_of(viewed) is client.tool_changes
    assert tool_changes_of(Own()) is changes
    assert tool_changes_of(plain) is None


def test_an_mcp_clients_tool_changes_are_told_of_its_tools_only_with_no_handler_set() -> None:
    told: list[str] = []
    client = MCPClient.stdio("never-started")
    client.tool_changes.listen(lambda: told.append("tools"))

    for kind in ("tools", "prompts", "resources"):
        client._list_changed(kind)  # as a server's notice is told

    assert told == ["tools"]


def test_a_view_that_is_its_own_source_is_no_endless_search() -> None:
    class Loop:
        @property
        def source(self) -> Loop:
            return self

    assert tool_changes_of(Loop()) is None
