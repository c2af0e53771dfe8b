"""Signals that reach a turn: a workflow waits for one when its turn asks to `await_signal`.

A turn exiting with `CustomExit(name="await_signal")` keeps its workflow
open: the next signal in the workflow's inbox (one a turn has not taken
yet, oldest first; `signal` delivers them) starts another turn of the same
agent, whose input `signal_input` builds. With no signal before the
orchestrator's signal timeout, the workflow ends with the waiting turn's
output. neuron-orch-temporal follows the same convention.
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import JsonValue

from layer0 import CustomExit, SignalPayload, TurnInput

__all__ = ["AWAITING_SIGNAL", "AWAIT_SIGNAL", "SIGNAL_KEY", "signal_input"]

AWAIT_SIGNAL: Final = "await_signal"
"""The name of the custom exit reason with which a turn asks to wait for a signal."""

AWAITING_SIGNAL: Final = CustomExit(name=AWAIT_SIGNAL)
"""The exit reason itself: `{"custom": "await_signal"}`."""

SIGNAL_KEY: Final = "signal"
"""The `TurnInput.metadata` key holding the `SignalPayload` (as JSON) a turn was woken by."""


def signal_input(original: TurnInput, payload: SignalPayload) -> TurnInput:
    """Return the input of the turn woken by `payload` after a turn asked to `await_signal`.

    - `message`: a text naming the signal type and its data as JSON;
    - `trigger`: `"signal"`; `session`: the same; `config`: the same;
    - `metadata`: the original object's keys plus `"signal": {"signal_type", "data"}`.
    """
    data = json.dumps(payload.data, sort_keys=True, ensure_ascii=False)
    metadata: dict[str, JsonValue] = (
        dict(original.metadata) if isinstance(original.metadata, dict) else {}
    )
    metadata[SIGNAL_KEY] = payload.model_dump(mode="json")
    return TurnInput(
        message=f"Signal {payload.signal_type!r} received: {data}",
        trigger="signal",
        session=original.session,
        config=original.config,
        metadata=metadata,
    )
