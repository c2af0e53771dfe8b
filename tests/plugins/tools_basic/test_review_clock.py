"""The clock given names that are folders of zones, not zones."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from neuron_tool import ToolCallError, ToolRegistry
from neuron_tools_basic import ClockError, clock, current_time

NOW = datetime(2026, 11, 22, 1, 15, 3, tzinfo=UTC)


@pytest.mark.parametrize("name", ["Europe", "America", "America/Argentina"])
def test_a_folder_of_zones_is_an_unknown_zone_not_an_os_error(name: str) -> None:
    with pytest.raises(ClockError, match=f"unknown time zone '{name}'") as caught:
        current_time(name, now=NOW)
    assert "zoneinfo" not in str(caught.value)  # no installation path


async def test_the_tool_reports_a_folder_of_zones_as_an_unknown_zone() -> None:
    with pytest.raises(ToolCallError, match="unknown time zone 'Europe'; use an IANA name"):
        await ToolRegistry([clock]).call("clock", {"timezone": "Europe"})
