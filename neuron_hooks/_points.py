"""Reading a declared set of hook points into a `frozenset[HookPoint]`."""

from __future__ import annotations

from collections.abc import Iterable

from layer0 import HookPoint

from .errors import InvalidHookError


def as_points(points: Iterable[HookPoint | str], *, owner: str) -> frozenset[HookPoint]:
    """Return `points` as HookPoints; `owner` names the hook in the error.

    Raises:
        InvalidHookError: a point is unknown, or there are none (the hook would never run).
    """
    if isinstance(points, str):
        # A bare string is an iterable of characters, never what was meant.
        points = (points,)
    try:
        declared = frozenset(HookPoint(point) for point in points)
    except (TypeError, ValueError) as exc:
        valid = ", ".join(HookPoint)
        raise InvalidHookError(
            f"hook {owner!r} declares an unknown point ({exc}); valid points: {valid}"
        ) from exc
    if not declared:
        raise InvalidHookError(f"hook {owner!r} declares no points, so it would never run")
    return declared
