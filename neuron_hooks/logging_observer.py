"""`LoggingObserver`: one structured log line per hook event, secrets redacted."""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import Any, Final

from layer0 import HookAction, HookContext, HookPoint
from layer0.money import cost_to_wire

from .redaction import redact
from .registry import CONTINUE

__all__ = ["LoggingObserver"]

_ALL_POINTS: Final = frozenset(HookPoint)


class LoggingObserver:
    """Logs every hook event as one line with the figures in `extra`; add with `observer=True`.

    The line's `extra` holds `hook_point`, `tool_name`, `tokens_used`, `cost`
    (a decimal string), `turns_completed` and `elapsed_ms`. Tool inputs,
    tool results and model output are left out unless `include_payloads` is
    set, and then only after `redact`, so secrets never reach a log line.
    """

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        include_payloads: bool = False,
    ) -> None:
        """Log to `logger` (default `neuron_hooks.events`) at `level`."""
        self.logger = logger if logger is not None else logging.getLogger("neuron_hooks.events")
        self.level = level
        self.include_payloads = include_payloads

    @property
    def points(self) -> Set[HookPoint]:
        """Every point."""
        return _ALL_POINTS

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Log `ctx` and continue."""
        if self.logger.isEnabledFor(self.level):
            fields = self.fields(ctx)
            self.logger.log(self.level, _message(fields), extra=fields)
        return CONTINUE

    def fields(self, ctx: HookContext) -> dict[str, Any]:
        """The `extra` fields logged for `ctx`; payloads, if included, are redacted."""
        fields: dict[str, Any] = {
            "hook_point": ctx.point.value,
            "tool_name": ctx.tool_name,
            "tokens_used": ctx.tokens_used,
            "cost": cost_to_wire(ctx.cost),
            "turns_completed": ctx.turns_completed,
            "elapsed_ms": ctx.elapsed,
        }
        if self.include_payloads:
            fields["tool_input"] = redact(ctx.tool_input)
            fields["tool_result"] = None if ctx.tool_result is None else redact(ctx.tool_result)
            output = None if ctx.model_output is None else ctx.model_output.model_dump(mode="json")
            fields["model_output"] = redact(output)
        return fields


def _message(fields: dict[str, Any]) -> str:
    """The human-readable line; it carries figures only, never payloads."""
    tool = f" tool={fields['tool_name']}" if fields["tool_name"] is not None else ""
    return (
        f"hook {fields['hook_point']}{tool} turns={fields['turns_completed']}"
        f" tokens={fields['tokens_used']} cost=${fields['cost']} elapsed_ms={fields['elapsed_ms']}"
    )
