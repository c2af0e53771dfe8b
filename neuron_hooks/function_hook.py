"""`FunctionHook` and `@hook`: a hook made from one async function."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Set

from layer0 import HookAction, HookContext, HookPoint

from ._points import as_points
from .errors import InvalidHookError

__all__ = ["FunctionHook", "HookFunction", "hook"]

HookFunction = Callable[[HookContext], Awaitable[HookAction]]
"""An async function that takes a `HookContext` and returns a `HookAction`."""


class FunctionHook:
    """A `layer0.Hook` that calls `fn` at `points`; its name defaults to `fn`'s name.

    `HookRegistry.add` uses `name` as the default registration name, so several
    function hooks can be added without naming each one twice.
    """

    def __init__(
        self, fn: HookFunction, *, points: Iterable[HookPoint | str], name: str | None = None
    ) -> None:
        """Wrap `fn`.

        Raises:
            InvalidHookError: `fn` is not an `async def` function, or `points` is
                empty or holds an unknown point.
        """
        self.name: str = name or getattr(fn, "__name__", None) or type(self).__name__
        if not inspect.iscoroutinefunction(fn):
            raise InvalidHookError(f"hook {self.name!r}: the function must be `async def`")
        self._fn = fn
        self._points = as_points(points, owner=self.name)

    @property
    def function(self) -> HookFunction:
        """The wrapped `async def` function."""
        return self._fn

    @property
    def points(self) -> Set[HookPoint]:
        """The points at which `fn` is called."""
        return self._points

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Call `fn` with `ctx`."""
        return await self._fn(ctx)

    def __repr__(self) -> str:
        points = ", ".join(sorted(self._points))
        return f"FunctionHook({self.name!r}, points={{{points}}})"


def hook(
    *, points: Iterable[HookPoint | str], name: str | None = None
) -> Callable[[HookFunction], FunctionHook]:
    """Turn the decorated async function into a `FunctionHook` listening at `points`."""

    def decorate(fn: HookFunction) -> FunctionHook:
        return FunctionHook(fn, points=points, name=name)

    return decorate
