"""`clock`: the current date and time, in UTC and in the local or a named IANA time zone."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from neuron_tool import ToolAnnotations, tool

__all__ = ["ClockError", "clock", "current_time"]

_UTC_NAMES: Final = frozenset({"UTC", "Z", "GMT", "ZULU"})
_MAX_ZONE_LENGTH: Final = 64


class ClockError(ValueError):
    """The time zone asked for is not a known IANA time zone."""


def current_time(timezone: str | None = None, *, now: datetime | None = None) -> dict[str, str]:
    """Return the time `now` (default: this instant) in `timezone` and in UTC.

    `timezone` is an IANA name (`Europe/Paris`); None or empty means the
    machine's local time zone. The answer holds `timezone`, `time` (ISO 8601
    with its UTC offset), `utc` (ISO 8601, `Z`) and `weekday` (in `timezone`).

    Raises:
        ClockError: `timezone` is not a known IANA time zone.
    """
    instant = (now or datetime.now(UTC)).astimezone(UTC)
    name = (timezone or "").strip()
    local = instant.astimezone(_zone(name)) if name else instant.astimezone()
    return {
        "timezone": _zone_name(local, name),
        "time": local.isoformat(timespec="seconds"),
        "utc": instant.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "weekday": local.strftime("%A"),
    }


def _zone(name: str) -> tzinfo:
    if name.upper() in _UTC_NAMES:
        return UTC
    hint = "use an IANA name such as 'Europe/Paris' or 'America/New_York'"
    if len(name) > _MAX_ZONE_LENGTH:
        raise ClockError(f"unknown time zone {name[:_MAX_ZONE_LENGTH]!r}…; {hint}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # ValueError: keys zoneinfo refuses outright (absolute paths, '..' parts);
        # OSError: a name that is a folder of zones ('Europe') or an unreadable file.
        raise ClockError(f"unknown time zone {name!r}; {hint}") from None


def _zone_name(local: datetime, asked: str) -> str:
    zone = local.tzinfo
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is UTC:
        return "UTC"
    return local.tzname() or asked or "local"


@tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def clock(timezone: str = "") -> dict[str, str]:
    """Tell the current date and time, in UTC and in a time zone.

    Args:
        timezone: An IANA time zone such as Europe/Paris or Asia/Tokyo; empty: the local one.
    """
    return current_time(timezone)
