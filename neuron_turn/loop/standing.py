"""Standing decisions: a person's decision that holds for a tool's later calls in a session.

A decision given with `always` (`Decision.approve(id, always=True)`,
`Decision.deny(id, reason, always=True)`), as the OpenAI Agents SDK's
`always_approve` and `always_reject`, also decides the later calls of that
tool in that session, without asking: approved, they run though the approval
policy holds them; denied, they are answered with the person's reason and
never run. They apply while the turn has an approval policy
(`NeuronTurnConfig.approval`), which is what reads them.

The turn resuming with such a decision declares a `write_memory` effect of
the session's standing decisions (the session scope's `STANDING_KEY`), so the
orchestrator keeps them with the turn's history, in one transaction; each
later turn reads them with its history. No tool may read or change that key
(the memory and effect tools refuse it, as they refuse the history's), so a
model cannot approve its own calls. A delegated agent's call decided with
`always` is remembered in that agent's session, as its own decisions are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

from layer0 import (
    ContextAssemblyError,
    SessionId,
    SessionScope,
    StateReader,
    WriteMemoryEffect,
)

from ._stored_history import read_kept
from ._tool_input import RefusedCall
from .provider import ToolUsePart

__all__ = [
    "STANDING_KEY",
    "StandingDecision",
    "read_standing",
    "standing_effect",
    "standing_from_json",
    "standing_json",
    "standing_refusal",
]

STANDING_KEY: Final = "neuron_turn/standing_decisions"
"""The session-scope key of a session's standing decisions, by tool name."""


class StandingDecision(BaseModel):
    """How every later call of one tool in a session is decided, and why (for a denial)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    decision: Literal["approve", "deny"]
    reason: str = ""


_STANDING: Final = TypeAdapter(dict[str, StandingDecision])


async def read_standing(state: StateReader, session: SessionId) -> dict[str, StandingDecision]:
    """Return the standing decisions stored for `session`, by tool name (empty: none).

    Raises:
        NonRetryableError: the store judged the read (a corrupt or unreadable file).
        RetryableError: the store failed otherwise.
        ContextAssemblyError: what is stored is not standing decisions (another
            program wrote it): a turn must not guess which calls a person allowed.
    """
    stored = await read_kept(state, session, STANDING_KEY, "the standing decisions")
    return standing_from_json(session, stored)


def standing_from_json(session: SessionId, stored: JsonValue) -> dict[str, StandingDecision]:
    """Return the standing decisions `stored` under `session`'s key (None: none).

    Raises:
        ContextAssemblyError: `stored` is not standing decisions.
    """
    if stored is None:
        return {}
    try:
        return _STANDING.validate_python(stored)
    except ValidationError as exc:
        raise ContextAssemblyError(
            f"the standing decisions of session {session!r} (key {STANDING_KEY!r}) do not "
            f"parse: {exc.errors()[0]['msg']}; refusing to guess which calls a person allowed"
        ) from None


def standing_effect(session: SessionId, standing: dict[str, StandingDecision]) -> WriteMemoryEffect:
    """Return the effect storing `standing` as `session`'s standing decisions."""
    value = standing_json(standing)
    return WriteMemoryEffect(scope=SessionScope(id=session), key=STANDING_KEY, value=value)


def standing_json(standing: Mapping[str, StandingDecision]) -> JsonValue:
    """Return `standing` as stored under `STANDING_KEY` (`standing_from_json` reads it)."""
    return {name: decided.model_dump(mode="json") for name, decided in standing.items()}


def standing_refusal(call: ToolUsePart, decided: StandingDecision) -> RefusedCall:
    """Return `call` answered unrun by the standing denial of its tool."""
    refusal = (
        f"Denied by a person for every call of {call.name!r} in this session: "
        f"{decided.reason or 'no reason given'}"
    )
    return RefusedCall(call.id, call.name, call.input, refusal)
