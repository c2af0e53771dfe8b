"""The input of a turn the orchestrator starts itself on a signal.

A handoff's input is neuron-orch-local's `handoff_input`, so the same
agents see the same input on both orchestrators.
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import JsonValue

from layer0 import SignalPayload, TurnInput

__all__ = ["SIGNAL_KEY", "signal_input"]

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
