"""The input an agent receives when another agent hands the conversation to it.

Convention: the new agent gets a `TurnInput` with

- `message`: a text saying who handed off and the handoff state as JSON.
  Without a session the new agent has no history to find the user's
  message in, so the original message's blocks follow that text;
- `trigger`: `"task"`;
- `session`: the same session, so it reads the conversation so far
  (the orchestrator runs the handoff after every other effect of the
  turn, its history write included);
- `config`: none (per-call overrides were meant for the previous agent);
- `metadata`: the original metadata object's keys, plus
  `"handoff": {"from": <agent>, "state": <state>}` for code to read;
  like `config`, the per-call keys meant for the previous agent's turn
  (`"neuron_turn"` call options, `"approval_decisions"`) are left out: the
  new agent must not inherit a forced tool choice, an output type, or
  decisions for calls it never made.
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import JsonValue

from layer0 import AgentId, Content, TextBlock, TurnInput

__all__ = ["HANDOFF_KEY", "handoff_input"]

HANDOFF_KEY: Final = "handoff"
"""The `TurnInput.metadata` key holding `{"from": agent, "state": state}` after a handoff."""
# Spelled out, not imported: this package stays importable without neuron_turn (Temporal
# workflow sandboxes import it); the handoff tests check these against neuron_turn's names.
_PER_CALL_KEYS: Final = frozenset({"neuron_turn", "approval_decisions"})


def handoff_input(original: TurnInput, *, source: AgentId, state: JsonValue) -> TurnInput:
    """Return the input of the agent that `source` hands `original`'s conversation to."""
    intro = f"The conversation was handed off to you by agent {source!r}."
    if state is not None:
        intro += f"\nHandoff state: {json.dumps(state, sort_keys=True, ensure_ascii=False)}"
    if original.session is None:
        message = Content([TextBlock(text=intro), *original.message.blocks])
    else:
        message = Content(intro)
    metadata: dict[str, JsonValue] = (
        {k: v for k, v in original.metadata.items() if k not in _PER_CALL_KEYS}
        if isinstance(original.metadata, dict)
        else {}
    )
    metadata[HANDOFF_KEY] = {"from": source, "state": state}
    return TurnInput(message=message, trigger="task", session=original.session, metadata=metadata)
