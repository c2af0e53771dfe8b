from __future__ import annotations

import logging
from typing import Any

import pytest

import layer0
from layer0 import Content, Continue, Halt, HookContext, HookPoint, usd
from neuron_hooks import CONTINUE, FunctionHook, HookRegistry, LoggingObserver

# A fake key, assembled from parts so that secret scanners do not flag this file.
SECRET = "sk-" + "ant-api03-" + "Qw7Er6Ty5Ui4Op3As2Df1Gh0Jk"
R = "[REDACTED]"

_FIGURES = {
    "tokens_used": 1234,
    "cost": usd("0.0123"),
    "turns_completed": 2,
    "elapsed": 150,
}

_FIGURE_KEYS = ("hook_point", "tool_name", "tokens_used", "cost", "turns_completed", "elapsed_ms")


def _ctx(point: HookPoint = HookPoint.PRE_TOOL_USE, **fields: Any) -> HookContext:
    return HookContext(point=point, **(_FIGURES | fields))


def _secret_ctx() -> HookContext:
    return _ctx(
        HookPoint.POST_TOOL_USE,
        tool_name="http_get",
        tool_input={"headers": {"Authorization": f"Bearer {SECRET}"}, "q": f"key={SECRET}"},
        tool_result=f"echo: {SECRET}",
        model_output=Content(f"I will use {SECRET} now"),
    )


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "neuron_hooks.events"]


def test_logging_observer_is_a_layer0_hook() -> None:
    assert isinstance(LoggingObserver(), layer0.Hook)


def test_logging_observer_listens_at_every_point() -> None:
    assert LoggingObserver().points == set(HookPoint)


async def test_logs_one_line_per_event_with_structured_figures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    observer = LoggingObserver()

    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        action = await observer.on_event(_ctx(tool_name="read_file"))

    assert action is CONTINUE
    (record,) = _records(caplog)
    assert record.levelno == logging.INFO
    assert "\n" not in record.getMessage()
    assert record.getMessage() == (
        "hook pre_tool_use tool=read_file turns=2 tokens=1234 cost=$0.0123 elapsed_ms=150"
    )
    fields = {k: getattr(record, k) for k in _FIGURE_KEYS}
    assert fields == {
        "hook_point": "pre_tool_use",
        "tool_name": "read_file",
        "tokens_used": 1234,
        "cost": "0.0123",
        "turns_completed": 2,
        "elapsed_ms": 150,
    }


async def test_events_without_a_tool_leave_it_out_of_the_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        await LoggingObserver().on_event(_ctx(HookPoint.EXIT_CHECK))

    (record,) = _records(caplog)
    assert record.getMessage().startswith("hook exit_check turns=2")
    assert record.tool_name is None  # type: ignore[attr-defined]


async def test_payloads_are_left_out_by_default(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        await LoggingObserver().on_event(_secret_ctx())

    (record,) = _records(caplog)
    for key in ("tool_input", "tool_result", "model_output"):
        assert not hasattr(record, key)


@pytest.mark.parametrize("include_payloads", [False, True], ids=["figures", "payloads"])
async def test_logging_observer_never_logs_secrets(
    include_payloads: bool, caplog: pytest.LogCaptureFixture
) -> None:
    observer = LoggingObserver(include_payloads=include_payloads)

    with caplog.at_level(logging.DEBUG):
        for point in HookPoint:
            await observer.on_event(_secret_ctx().model_copy(update={"point": point}))

    records = _records(caplog)
    assert len(records) == len(HookPoint)
    assert SECRET not in caplog.text
    for record in records:
        assert SECRET not in repr(record.__dict__)
        assert SECRET not in logging.Formatter("%(message)s").format(record)


async def test_included_payloads_are_redacted_but_otherwise_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        await LoggingObserver(include_payloads=True).on_event(_secret_ctx())

    (record,) = _records(caplog)
    assert record.tool_input == {  # type: ignore[attr-defined]
        "headers": {"Authorization": R},
        "q": f"key={R}",
    }
    assert record.tool_result == f"echo: {R}"  # type: ignore[attr-defined]
    assert record.model_output == f"I will use {R} now"  # type: ignore[attr-defined]


async def test_custom_logger_and_level_are_used(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("tests.audit")
    observer = LoggingObserver(logger, level=logging.WARNING)

    with caplog.at_level(logging.WARNING, logger="tests.audit"):
        await observer.on_event(_ctx())

    (record,) = [r for r in caplog.records if r.name == "tests.audit"]
    assert record.levelno == logging.WARNING


async def test_nothing_is_logged_or_built_below_the_loggers_level(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    observer = LoggingObserver(level=logging.DEBUG)

    def fail(ctx: HookContext) -> dict[str, Any]:
        raise AssertionError("fields built although the line is dropped")

    monkeypatch.setattr(observer, "fields", fail)
    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        assert await observer.on_event(_ctx()) == Continue()

    assert _records(caplog) == []


async def test_as_an_observer_it_logs_even_after_a_halt(caplog: pytest.LogCaptureFixture) -> None:
    async def halter(ctx: HookContext) -> layer0.HookAction:
        return Halt(reason="stop")

    registry = HookRegistry()
    registry.add(FunctionHook(halter, points=list(HookPoint)))
    registry.add(LoggingObserver(), observer=True)

    with caplog.at_level(logging.INFO, logger="neuron_hooks.events"):
        assert await registry.dispatch(_ctx(HookPoint.PRE_INFERENCE)) == Halt(reason="stop")

    (record,) = _records(caplog)
    assert record.hook_point == "pre_inference"  # type: ignore[attr-defined]
