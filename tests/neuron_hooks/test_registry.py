from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Set
from typing import Any

import pytest

import layer0
from layer0 import (
    Continue,
    Halt,
    HookAction,
    HookContext,
    HookPoint,
    ModifyToolInput,
    SkipTool,
    usd,
)
from neuron_hooks import (
    CONTINUE,
    DuplicateHookError,
    FunctionHook,
    HookRegistry,
    HookRegistryError,
    InvalidHookError,
    RegisteredHook,
    hook,
)

PRE_TOOL = HookPoint.PRE_TOOL_USE
PRE_INFERENCE = HookPoint.PRE_INFERENCE


def _ctx(point: HookPoint = PRE_TOOL, **fields: Any) -> HookContext:
    base: dict[str, Any] = {"tokens_used": 0, "cost": usd("0"), "turns_completed": 0, "elapsed": 0}
    return HookContext(point=point, **(base | fields))


class Recording:
    """A hook that records its calls into a shared list and returns a fixed action."""

    def __init__(
        self,
        label: str,
        calls: list[str],
        action: HookAction | None = None,
        *,
        points: Set[HookPoint] = frozenset(HookPoint),
    ) -> None:
        self.label = label
        self.calls = calls
        self.action: HookAction = action if action is not None else Continue()
        self._points = points

    @property
    def points(self) -> Set[HookPoint]:
        return self._points

    async def on_event(self, ctx: HookContext) -> HookAction:
        self.calls.append(self.label)
        return self.action


class Exploding:
    points = frozenset(HookPoint)

    async def on_event(self, ctx: HookContext) -> HookAction:
        raise RuntimeError("boom: disk on fire")


def _registry(*hooks: Recording, observers: tuple[Recording, ...] = ()) -> HookRegistry:
    registry = HookRegistry()
    for h in hooks:
        registry.add(h, name=h.label, observer=h in observers)
    return registry


# --- ordering and points -------------------------------------------------------------------


async def test_hooks_run_in_registration_order() -> None:
    calls: list[str] = []
    registry = _registry(*(Recording(label, calls) for label in ("c", "a", "b")))

    assert await registry.dispatch(_ctx()) == Continue()
    assert calls == ["c", "a", "b"]


async def test_hook_runs_only_at_the_points_it_declares() -> None:
    calls: list[str] = []
    registry = _registry(
        Recording("tools", calls, points={PRE_TOOL}),
        Recording("inference", calls, points={PRE_INFERENCE}),
    )

    await registry.dispatch(_ctx(PRE_INFERENCE))
    await registry.dispatch(_ctx(HookPoint.EXIT_CHECK))

    assert calls == ["inference"]


async def test_first_non_continue_action_wins_and_stops_pipeline() -> None:
    calls: list[str] = []
    registry = _registry(
        Recording("pass", calls),
        Recording("skip", calls, SkipTool(reason="first")),
        Recording("halt", calls, Halt(reason="second")),
    )

    assert await registry.dispatch(_ctx()) == SkipTool(reason="first")
    assert calls == ["pass", "skip"]


async def test_dispatch_with_no_hooks_at_the_point_returns_the_shared_continue() -> None:
    registry = _registry(Recording("tools", [], points={PRE_TOOL}))

    assert await HookRegistry().dispatch(_ctx()) is CONTINUE
    assert await registry.dispatch(_ctx(PRE_INFERENCE)) is CONTINUE


async def test_all_continue_returns_continue() -> None:
    registry = _registry(Recording("a", []), Recording("b", []))

    assert await registry.dispatch(_ctx()) == Continue()


# --- failures ------------------------------------------------------------------------------


async def test_raising_hook_is_logged_with_its_name_and_treated_as_continue(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []
    registry = HookRegistry()
    registry.add(Exploding(), name="flaky-guard")
    registry.add(Recording("after", calls, Halt(reason="later hook decides")), name="after")

    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        action = await registry.dispatch(_ctx())

    assert action == Halt(reason="later hook decides")
    assert calls == ["after"]
    (record,) = [r for r in caplog.records if r.name == "neuron_hooks"]
    assert record.levelno == logging.ERROR
    assert "flaky-guard" in record.getMessage()
    assert "pre_tool_use" in record.getMessage()
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert "boom: disk on fire" in caplog.text


async def test_raising_hook_alone_yields_continue(caplog: pytest.LogCaptureFixture) -> None:
    registry = HookRegistry()
    registry.add(Exploding())

    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        assert await registry.dispatch(_ctx()) == Continue()
    assert "'Exploding'" in caplog.text


async def test_cancellation_of_a_hook_is_not_swallowed() -> None:
    started = asyncio.Event()

    class Waiting:
        points = frozenset(HookPoint)

        async def on_event(self, ctx: HookContext) -> HookAction:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("never reached")

    registry = HookRegistry()
    registry.add(Waiting())
    dispatching = asyncio.ensure_future(registry.dispatch(_ctx()))
    await started.wait()

    dispatching.cancel()

    with pytest.raises(asyncio.CancelledError):
        await dispatching


async def test_a_hook_raising_a_cancellation_of_its_own_is_a_failed_hook_not_a_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # E.g. it awaited a future something else cancelled: the task itself was not stopped.
    class Stray:
        points = frozenset(HookPoint)

        async def on_event(self, ctx: HookContext) -> HookAction:
            raise asyncio.CancelledError

    registry = HookRegistry()
    registry.add(Stray())

    with caplog.at_level(logging.ERROR):
        assert isinstance(await registry.dispatch(_ctx()), Continue)

    assert any("'Stray' raised" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    "point", [p for p in HookPoint if p is not HookPoint.PRE_TOOL_USE], ids=str
)
@pytest.mark.parametrize(
    "action",
    [SkipTool(reason="nope"), ModifyToolInput(new_input={"x": 1})],
    ids=lambda a: a.action,
)
async def test_tool_actions_outside_pre_tool_use_are_logged_and_ignored(
    point: HookPoint, action: HookAction, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []
    registry = _registry(Recording("misplaced", calls, action), Recording("next", calls))

    with caplog.at_level(logging.WARNING, logger="neuron_hooks"):
        result = await registry.dispatch(_ctx(point))

    assert result == Continue()
    assert calls == ["misplaced", "next"]
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "'misplaced'" in message
    assert action.action in message
    assert point.value in message


async def test_skip_tool_at_pre_inference_is_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []
    registry = _registry(
        Recording("skipper", calls, SkipTool(reason="too early")),
        Recording("halter", calls, Halt(reason="valid")),
    )

    with caplog.at_level(logging.WARNING, logger="neuron_hooks"):
        result = await registry.dispatch(_ctx(PRE_INFERENCE))

    assert result == Halt(reason="valid")
    assert "hook 'skipper' returned skip_tool at pre_inference" in caplog.text


@pytest.mark.parametrize(
    "action", [SkipTool(reason="no"), ModifyToolInput(new_input=[1, 2])], ids=lambda a: a.action
)
async def test_tool_actions_at_pre_tool_use_win(
    action: HookAction, caplog: pytest.LogCaptureFixture
) -> None:
    registry = _registry(Recording("guard", [], action))

    with caplog.at_level(logging.WARNING, logger="neuron_hooks"):
        assert await registry.dispatch(_ctx(PRE_TOOL)) == action
    assert caplog.records == []


@pytest.mark.parametrize("point", list(HookPoint), ids=str)
async def test_halt_is_valid_at_every_point(point: HookPoint) -> None:
    registry = _registry(Recording("halter", [], Halt(reason="stop")))

    assert await registry.dispatch(_ctx(point)) == Halt(reason="stop")


async def test_hook_returning_a_non_action_is_logged_and_treated_as_continue(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class ReturnsNone:
        points = frozenset(HookPoint)

        async def on_event(self, ctx: HookContext) -> Any:
            return None

    calls: list[str] = []
    registry = HookRegistry()
    registry.add(ReturnsNone())
    registry.add(Recording("next", calls), name="next")

    with caplog.at_level(logging.WARNING, logger="neuron_hooks"):
        assert await registry.dispatch(_ctx()) == Continue()
    assert calls == ["next"]
    assert "'ReturnsNone' returned NoneType" in caplog.text


# --- observers -----------------------------------------------------------------------------


async def test_observer_runs_after_halt_and_its_action_is_ignored() -> None:
    calls: list[str] = []
    watcher = Recording("watcher", calls, SkipTool(reason="observers cannot decide"))
    registry = _registry(
        Recording("halter", calls, Halt(reason="stop")),
        Recording("skipped", calls),
        watcher,
        observers=(watcher,),
    )

    assert await registry.dispatch(_ctx()) == Halt(reason="stop")
    assert calls == ["halter", "watcher"]


async def test_observer_halt_does_not_halt() -> None:
    calls: list[str] = []
    watcher = Recording("watcher", calls, Halt(reason="ignored"))
    registry = _registry(watcher, Recording("guard", calls), observers=(watcher,))

    assert await registry.dispatch(_ctx()) == Continue()
    assert calls == ["watcher", "guard"]


async def test_raising_observer_is_logged_and_the_guards_action_stands(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = HookRegistry()
    registry.add(Recording("guard", [], Halt(reason="stop")), name="guard")
    registry.add(Exploding(), name="broken-observer", observer=True)

    with caplog.at_level(logging.ERROR, logger="neuron_hooks"):
        assert await registry.dispatch(_ctx()) == Halt(reason="stop")
    assert "'broken-observer'" in caplog.text


async def test_observer_returning_misplaced_action_is_not_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watcher = Recording("watcher", [], SkipTool(reason="whatever"))
    registry = _registry(watcher, observers=(watcher,))

    with caplog.at_level(logging.WARNING, logger="neuron_hooks"):
        assert await registry.dispatch(_ctx(PRE_INFERENCE)) == Continue()
    assert caplog.records == []


# --- introspection -------------------------------------------------------------------------


def test_len_iter_and_names_follow_registration_order() -> None:
    first = Recording("first", [], points={PRE_TOOL})
    second = Recording("second", [])
    registry = HookRegistry()
    registry.add(first, name="first")
    registry.add(second, name="second", observer=True)

    assert len(registry) == 2
    assert registry.names() == ("first", "second")
    assert list(registry) == [
        RegisteredHook(name="first", hook=first, observer=False, points=frozenset({PRE_TOOL})),
        RegisteredHook(name="second", hook=second, observer=True, points=frozenset(HookPoint)),
    ]


def test_registered_hook_is_frozen() -> None:
    registry = _registry(Recording("a", []))
    (entry,) = registry

    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.observer = True  # type: ignore[misc]


def test_has_hooks_reflects_the_declared_points() -> None:
    registry = HookRegistry()
    assert not any(registry.has_hooks(point) for point in HookPoint)

    registry.add(Recording("tools", [], points={PRE_TOOL, HookPoint.POST_TOOL_USE}))

    assert {p for p in HookPoint if registry.has_hooks(p)} == {PRE_TOOL, HookPoint.POST_TOOL_USE}


async def test_points_are_read_once_when_the_hook_is_added() -> None:
    calls: list[str] = []
    mutable = Recording("mutable", calls, points={PRE_TOOL})
    registry = _registry(mutable)

    mutable._points = {PRE_INFERENCE}
    await registry.dispatch(_ctx(PRE_INFERENCE))

    assert calls == []
    assert registry.has_hooks(PRE_TOOL)


def test_name_defaults_to_the_hook_class_name() -> None:
    registry = HookRegistry()
    registry.add(Exploding())

    assert registry.names() == ("Exploding",)


def test_duplicate_name_is_rejected_with_a_hint() -> None:
    registry = HookRegistry()
    registry.add(Exploding())

    with pytest.raises(DuplicateHookError, match="'Exploding' is already registered; pass name="):
        registry.add(Exploding())
    registry.add(Exploding(), name="Exploding-2")
    assert len(registry) == 2


def test_registry_errors_share_the_layer0_hook_error_root() -> None:
    assert issubclass(DuplicateHookError, HookRegistryError)
    assert issubclass(DuplicateHookError, ValueError)
    assert issubclass(InvalidHookError, TypeError)
    assert issubclass(HookRegistryError, layer0.HookError)


def test_object_without_the_hook_shape_is_rejected() -> None:
    with pytest.raises(InvalidHookError, match="'thing' is a str"):
        HookRegistry().add("not a hook", name="thing")  # type: ignore[arg-type]


def test_sync_on_event_is_rejected_at_registration() -> None:
    class Sync:
        points = frozenset(HookPoint)

        def on_event(self, ctx: HookContext) -> HookAction:
            return Continue()

    with pytest.raises(InvalidHookError, match="async def"):
        HookRegistry().add(Sync())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("points", "message"),
    [(frozenset(), "declares no points"), ({"pre_tool", PRE_TOOL}, "unknown point")],
)
def test_hook_with_no_or_unknown_points_is_rejected(points: Set[Any], message: str) -> None:
    with pytest.raises(InvalidHookError, match=message):
        HookRegistry().add(Recording("bad", [], points=points))


def test_a_failed_add_leaves_the_registry_unchanged() -> None:
    registry = HookRegistry()
    with pytest.raises(InvalidHookError):
        registry.add(Recording("bad", [], points=frozenset()))

    assert len(registry) == 0
    assert not registry.has_hooks(PRE_TOOL)


# --- function hooks ------------------------------------------------------------------------


async def test_hook_decorator_builds_a_named_function_hook() -> None:
    @hook(points=[PRE_TOOL])
    async def forbid_everything(ctx: HookContext) -> HookAction:
        return SkipTool(reason=f"{ctx.tool_name} forbidden")

    registry = HookRegistry()
    registry.add(forbid_everything)

    assert isinstance(forbid_everything, FunctionHook)
    assert isinstance(forbid_everything, layer0.Hook)
    assert registry.names() == ("forbid_everything",)
    assert await registry.dispatch(_ctx(tool_name="rm")) == SkipTool(reason="rm forbidden")
    assert await registry.dispatch(_ctx(PRE_INFERENCE)) is CONTINUE


async def test_function_hook_accepts_point_names_and_an_explicit_name() -> None:
    async def fn(ctx: HookContext) -> HookAction:
        return Halt(reason="done")

    wrapped = FunctionHook(fn, points=["exit_check"], name="finisher")

    assert wrapped.points == {HookPoint.EXIT_CHECK}
    assert wrapped.name == "finisher"
    assert await wrapped.on_event(_ctx(HookPoint.EXIT_CHECK)) == Halt(reason="done")
    assert "finisher" in repr(wrapped)


def test_two_function_hooks_register_under_their_own_names() -> None:
    @hook(points=[PRE_TOOL])
    async def one(ctx: HookContext) -> HookAction:
        return Continue()

    @hook(points=[PRE_TOOL])
    async def two(ctx: HookContext) -> HookAction:
        return Continue()

    registry = HookRegistry()
    registry.add(one)
    registry.add(two)

    assert registry.names() == ("one", "two")


def test_function_hook_rejects_a_sync_function() -> None:
    def sync(ctx: HookContext) -> HookAction:
        return Continue()

    with pytest.raises(InvalidHookError, match=r"'sync'.*async def"):
        FunctionHook(sync, points=[PRE_TOOL])  # type: ignore[arg-type]


def test_function_hook_reads_a_bare_string_as_one_point() -> None:
    async def fn(ctx: HookContext) -> HookAction:
        return Continue()

    assert FunctionHook(fn, points="pre_tool_use").points == {PRE_TOOL}
