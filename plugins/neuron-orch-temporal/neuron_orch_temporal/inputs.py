"""The inputs of turns the orchestrator starts itself: after a handoff, and on a signal.

The handoff input follows neuron-orch-local's convention exactly (its
`handoff_input`), so the same agents see the same input on both
orchestrators; a test runs one scenario through both to hold them together.
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import JsonValue

from layer0 import AgentId, Content, SignalPayload, TextBlock, TurnInput

__all__ = ["HANDOFF_KEY", "SIGNAL_KEY", "handoff_input", "signal_input"]

HANDOFF_KEY: Final = "handoff"
"""The `TurnInput.metadata` key holding `{"from": agent, "state": state}` after a handoff."""

SIGNAL_KEY: Final = "signal"
"""The `TurnInput.metadata` key holding the `SignalPayload` (as JSON) a turn was woken by."""


def handoff_input(original: TurnInput, *, source: AgentId, state: JsonValue) -> TurnInput:
    """Return the input of the agent that `source` hands `original`'s conversation to.

    - `message`: a text saying who handed off and the handoff state as JSON;
      without a session the original message's blocks follow it;
    - `trigger`: `"task"`; `session`: the same; `config`: none;
    - `metadata`: the original object's keys plus `"handoff": {"from", "state"}`.
    """
    intro = f"The conversation was handed off to you by agent {source!r}."
    if state is not None:
        intro += f"\nHandoff state: {json.dumps(state, sort_keys=True, ensure_ascii=False)}"
    if original.session is None:
        message = Content([TextBlock(text=intro), *original.message.blocks])
    else:
        message = Content(intro)
    metadata = _metadata(original)
    metadata[HANDOFF_KEY] = {"from": source, "state": state}
    return TurnInput(message=message, trigger="task", session=original.session, metadata=metadata)


def signal_input(original: TurnInput, payload: SignalPayload) -> TurnInput:
    """Return the input of the turn woken by `payload` after a turn asked to `await_signal`.

    - `message`: a text naming the signal type and its data as JSON;
    - `trigger`: `"signal"`; `session`: the same; `config`: the same;
    - `metadata`: the original object's keys plus `"signal": {"signal_type", "data"}`.
    """
    data = json.dumps(payload.data, sort_keys=True, ensure_ascii=False)
    metadata = _metadata(original)
    metadata[SIGNAL_KEY] = payload.model_dump(mode="json")
    return TurnInput(
        message=f"Signal {payload.signal_type!r} received: {data}",
        trigger="signal",
        session=original.session,
        config=original.config,
        metadata=metadata,
    )


def _metadata(original: TurnInput) -> dict[str, JsonValue]:
    return dict(original.metadata) if isinstance(original.metadata, dict) else {}
