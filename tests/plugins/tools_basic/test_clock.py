"""The clock: the time in UTC and in a named or the local time zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from neuron_tool import ToolCallError, ToolRegistry
from neuron_tools_basic import ClockError, clock, current_time

NOW = datetime(2026, 11, 22, 1, 15, 3, 812, tzinfo=UTC)


def test_a_named_time_zone_gives_its_time_offset_and_weekday() -> None:
    assert current_time("Asia/Tokyo", now=NOW) == {
        "timezone": "Asia/Tokyo",
        "time": "2026-11-22T10:15:03+09:00",
        "utc": "2026-11-22T01:15:03Z",
        "weekday": "Sunday",
    }


def test_the_weekday_is_the_one_in_the_time_zone() -> None:
    answer = current_time("America/Los_Angeles", now=NOW)
    assert answer["time"] == "2026-11-21T17:15:03-08:00"
    assert answer["weekday"] == "Saturday"


def test_daylight_saving_time_is_applied() -> None:
    summer = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert current_time("Europe/Paris", now=summer)["time"] == "2026-07-01T14:00:00+02:00"
    assert current_time("Europe/Paris", now=NOW)["time"] == "2026-11-22T02:15:03+01:00"


@pytest.mark.parametrize("name", ["UTC", "utc", "Z", "GMT", " UTC "])
def test_utc_names(name: str) -> None:
    answer = current_time(name, now=NOW)
    assert answer["timezone"] == "UTC"
    assert answer["time"] == "2026-11-22T01:15:03+00:00"


@pytest.mark.parametrize("name", [None, "", "  "])
def test_no_time_zone_means_the_local_one(name: str | None) -> None:
    answer = current_time(name, now=NOW)
    local = NOW.astimezone()
    assert answer["time"] == local.isoformat(timespec="seconds")
    assert answer["timezone"] == (local.tzname() or "local")
    assert answer["utc"] == "2026-11-22T01:15:03Z"


def test_a_naive_now_is_taken_as_local_time() -> None:
    naive = datetime(2026, 11, 22, 1, 15, 3)
    assert current_time("UTC", now=naive)["utc"] == naive.astimezone(UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def test_without_now_it_is_the_current_time() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    answer = datetime.fromisoformat(current_time("UTC")["time"])
    after = datetime.now(UTC)
    assert before <= answer <= after


@pytest.mark.parametrize(
    "name", ["Mars/Olympus_Mons", "Asia/Tokio", "/etc/passwd", "../../etc/passwd", "Europe/../x"]
)
def test_unknown_or_unsafe_time_zones_are_refused(name: str) -> None:
    with pytest.raises(ClockError, match="unknown time zone") as caught:
        current_time(name, now=NOW)
    assert "use an IANA name such as 'Europe/Paris'" in str(caught.value)


def test_an_overlong_time_zone_is_refused_and_cut_short() -> None:
    with pytest.raises(ClockError) as caught:
        current_time("A" * 1000, now=NOW)
    assert len(str(caught.value)) < 200


async def test_the_tool_answers_through_the_registry() -> None:
    registry = ToolRegistry([clock])
    answer = await registry.call("clock", {"timezone": "Asia/Tokyo"})
    assert isinstance(answer, dict)
    assert answer["timezone"] == "Asia/Tokyo"
    assert str(answer["time"]).endswith("+09:00")
    assert isinstance(await registry.call("clock", {}), dict)


async def test_the_tool_reports_an_unknown_zone_as_a_failed_call() -> None:
    with pytest.raises(ToolCallError, match="unknown time zone 'Asia/Tokio'"):
        await ToolRegistry([clock]).call("clock", {"timezone": "Asia/Tokio"})


def test_the_tool_schema_has_one_optional_string() -> None:
    assert clock.name == "clock"
    assert "required" not in clock.input_schema
    assert clock.input_schema["properties"] == {
        "timezone": {
            "default": "",
            "description": "An IANA time zone such as Europe/Paris or Asia/Tokyo; "
            "empty: the local one.",
            "type": "string",
        }
    }
