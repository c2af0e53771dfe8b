"""`HookRegistry`: the async pipeline that runs hooks at each point of a turn."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from layer0 import (
    Continue,
    Halt,
    Hook,
    HookAction,
    HookContext,
    HookPoint,
    ModifyToolInput,
    SkipTool,
)

from ._points import as_points
from .errors import DuplicateHookError, InvalidHookError
from .function_hook import FunctionHook
from .lifecycle import LifecycleEvent, LifecycleObserver
from .progress import ProgressObserver, ToolProgress

__all__ = ["CONTINUE", "HookRegistry", "RegisteredHook"]

logger: Final = logging.getLogger("neuron_hooks")

# model_construct: a literal needs no validation, and validating would build the model at import.
CONTINUE: Final = Continue.model_construct()
"""The shared `Continue()`; actions are frozen, so one instance serves every call."""


@dataclass(frozen=True, slots=True)
class RegisteredHook:
    """One hook in a `HookRegistry`: its name, whether it only observes, and its points.

    `points` is read from the hook once, when it is added.
    """

    name: str
    """The name log lines use for the hook; unique within its registry."""
    hook: Hook
    """The hook itself."""
    observer: bool
    """Whether the hook only watches: it always runs and its action is ignored."""
    points: frozenset[HookPoint]
    """The points the hook declared when it was added."""


class HookRegistry:
    """Runs hooks in registration order at the points they declare.

    The first action other than `continue` from a non-observer hook wins and
    the remaining non-observer hooks are skipped. Observers always run and
    their actions are ignored. A hook that raises is logged and counts as
    `continue`; an action that is not valid at the point is logged and ignored.
    """

    def __init__(self) -> None:
        self._entries: list[RegisteredHook] = []
        # Rebuilt on every add, so dispatch does one dict lookup and no filtering.
        self._by_point: dict[HookPoint, tuple[tuple[RegisteredHook, _Call], ...]] = {}
        self._lifecycle: list[tuple[str, LifecycleObserver]] = []
        self._progress: list[tuple[str, ProgressObserver]] = []

    def add(self, hook: Hook, /, *, name: str | None = None, observer: bool = False) -> None:
        """Register `hook` after those already registered.

        `name` defaults to the hook's own `name` attribute if it is a string,
        else its class name. Observers always run and their actions are ignored.
        A hook that also has an async `on_lifecycle` method gets lifecycle
        events too (see `neuron_hooks.lifecycle`).

        Raises:
            DuplicateHookError: a hook with that name is already registered.
            InvalidHookError: `hook` lacks `points` or an async `on_event`, or
                declares no valid points.
        """
        name = name if name is not None else _default_name(hook)
        if self._taken(name):
            raise DuplicateHookError(name)
        _check_shape(hook, name)
        entry = RegisteredHook(
            name=name, hook=hook, observer=observer, points=as_points(hook.points, owner=name)
        )
        self._entries.append(entry)
        if isinstance(hook, LifecycleObserver) and _observes_lifecycle(hook):
            self._lifecycle.append((name, hook))
        if _observes_progress(hook):
            self._progress.append((name, hook))  # type: ignore[arg-type]
        self._by_point = {
            point: tuple((e, _call_of(e.hook)) for e in self._entries if point in e.points)
            for point in HookPoint
            if any(point in e.points for e in self._entries)
        }

    def add_lifecycle_observer(
        self, observer: LifecycleObserver, /, *, name: str | None = None
    ) -> None:
        """Register `observer` for lifecycle events only (budget and compaction).

        Lifecycle events are not hook points (`HookPoint` is wire, shared with
        the Rust reference), so an observer of them needs no `points`.

        Raises:
            DuplicateHookError: a hook or observer with that name is already registered.
            InvalidHookError: `observer` has no async `on_lifecycle` method.
        """
        self._add_observer(observer, name, self._lifecycle, "lifecycle", "on_lifecycle")

    def add_progress_observer(
        self, observer: ProgressObserver, /, *, name: str | None = None
    ) -> None:
        """Register `observer` for tools' progress reports only (`neuron_hooks.progress`).

        Raises:
            DuplicateHookError: a hook or observer with that name is already registered.
            InvalidHookError: `observer` has no async `on_progress` method.
        """
        self._add_observer(observer, name, self._progress, "progress", "on_progress")

    def _add_observer(
        self,
        observer: Any,
        name: str | None,
        into: list[tuple[str, Any]],
        kind: str,
        method: str,
    ) -> None:
        """Register `observer` in `into` if it has the async `method` its `kind` needs."""
        name = name if name is not None else _default_name(observer)
        if self._taken(name):
            raise DuplicateHookError(name)
        if not inspect.iscoroutinefunction(getattr(observer, method, None)):
            raise InvalidHookError(
                f"{kind} observer {name!r} is a {type(observer).__name__}, "
                f"which lacks an `async def {method}(event)` method"
            )
        into.append((name, observer))

    def has_progress_observers(self) -> bool:
        """Whether anything listens to tools' progress reports."""
        return bool(self._progress)

    async def notify_progress(self, event: ToolProgress) -> None:
        """Give `event` to every progress observer, in registration order.

        Never raises because of an observer: a failure is logged with its name.
        """
        for name, observer in tuple(self._progress):
            await _delivered(
                name,
                observer.on_progress(event),
                ("progress observer %r raised on a report of tool %r; ignored", name, event.name),
                {"tool_name": event.name},
            )

    def _taken(self, name: str) -> bool:
        return (
            name in self.names()
            or any(name == taken for taken, _ in self._lifecycle)
            or any(name == taken for taken, _ in self._progress)
        )

    def has_lifecycle_observers(self) -> bool:
        """Whether anything listens to lifecycle events."""
        return bool(self._lifecycle)

    async def notify(self, event: LifecycleEvent) -> None:
        """Give `event` to every lifecycle observer, in registration order.

        Never raises because of an observer: a failure is logged with its name.
        """
        for name, observer in tuple(self._lifecycle):
            await _delivered(
                name,
                observer.on_lifecycle(event),
                ("lifecycle observer %r raised on %s; ignored", name, event.type),
                {"lifecycle_event": event.type},
            )

    def has_hooks(self, point: HookPoint) -> bool:
        """Whether any hook listens at `point`; if not, the loop need not build a context."""
        return point in self._by_point

    def names(self) -> tuple[str, ...]:
        """The names of the registered hooks, in registration order."""
        return tuple(entry.name for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[RegisteredHook]:
        """Iterate over the registered hooks in registration order."""
        return iter(tuple(self._entries))

    async def dispatch(self, ctx: HookContext) -> HookAction:
        """Run the hooks listening at `ctx.point` and return the action that won.

        Never raises because of a hook: failures are logged and count as `continue`.
        """
        entries = self._by_point.get(ctx.point)
        if entries is None:
            return CONTINUE
        chosen: HookAction | None = None
        for entry, call in entries:
            if chosen is not None and not entry.observer:
                continue
            try:
                action = await call(ctx)
            except Exception:
                # A broken hook must not take the turn down (layer0.Hook's contract).
                _log_failure(entry, ctx.point)
                continue
            except asyncio.CancelledError:
                if _being_cancelled():
                    raise
                # The hook's own (a future it awaited was cancelled elsewhere), not the
                # turn's: a broken hook, which must not end the turn as if it were stopped.
                _log_failure(entry, ctx.point)
                continue
            if not entry.observer and type(action) is not Continue:
                chosen = _judge(entry, ctx.point, action)
        return CONTINUE if chosen is None else chosen


_Call = Callable[[HookContext], Awaitable[object]]


def _call_of(hook: Hook) -> _Call:
    """What dispatch awaits for `hook`: a `FunctionHook`'s own function, else `on_event`.

    Looked up once, when the hook is added (as its points are); calling the
    function itself saves a coroutine frame per hook per point.
    """
    if type(hook) is FunctionHook:
        return hook.function
    return hook.on_event


def _being_cancelled() -> bool:
    """Whether the running task has been asked to stop (`Task.cancel`), not merely raised at."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


def _log_failure(entry: RegisteredHook, point: HookPoint) -> None:
    """Log the exception being handled, naming the hook; call only from an `except`."""
    logger.exception(
        "hook %r raised at %s; treated as continue",
        entry.name,
        point.value,
        extra={"hook_name": entry.name, "hook_point": point.value},
    )


def _judge(entry: RegisteredHook, point: HookPoint, action: object) -> HookAction | None:
    """Return `action` if it decides the pipeline, or None if the pipeline goes on."""
    if isinstance(action, Continue):
        return None
    if isinstance(action, Halt):
        return action
    if isinstance(action, SkipTool | ModifyToolInput):
        if point == HookPoint.PRE_TOOL_USE:
            return action
        logger.warning(
            "hook %r returned %s at %s, where only continue or halt apply; ignored",
            entry.name,
            action.action,
            point.value,
            extra={"hook_name": entry.name, "hook_point": point.value},
        )
        return None
    logger.warning(
        "hook %r returned %s at %s, which is not a HookAction; treated as continue",
        entry.name,
        type(action).__name__,
        point.value,
        extra={"hook_name": entry.name, "hook_point": point.value},
    )
    return None


async def _delivered(
    name: str, delivery: Awaitable[None], failure: tuple[object, ...], extra: dict[str, str]
) -> None:
    """Await an observer's `delivery`; what it raises is logged, never passed on.

    `failure` is the log message and its arguments, formatted only if it fails.
    """
    try:
        await delivery
    except Exception:
        logger.exception(*failure, extra={"hook_name": name, **extra})


def _default_name(hook: object) -> str:
    """The hook's own `name` if it is a string (as on `FunctionHook`), else its class name."""
    own = getattr(hook, "name", None)
    return own if isinstance(own, str) and own else type(hook).__name__


def _observes_lifecycle(hook: object) -> bool:
    return isinstance(hook, LifecycleObserver) and inspect.iscoroutinefunction(hook.on_lifecycle)


def _observes_progress(hook: object) -> bool:
    return isinstance(hook, ProgressObserver) and inspect.iscoroutinefunction(hook.on_progress)


def _check_shape(hook: object, name: str) -> None:
    """Fail at registration, not on every event, when `hook` cannot run as a hook."""
    if not isinstance(hook, Hook):
        raise InvalidHookError(
            f"hook {name!r} is a {type(hook).__name__}, which lacks `points` or `on_event`"
        )
    if not inspect.iscoroutinefunction(hook.on_event):
        raise InvalidHookError(f"hook {name!r}: `on_event` must be an `async def` method")
