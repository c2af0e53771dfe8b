"""What `run` says about how a turn ended: `--json`'s top-level facts, and why it stopped.

A turn that did not `complete` may print little or nothing on stdout (a
`--max-turns` reached before any text), so the command line says on stderr
what stopped it and what to do next, as `git` does after a merge that
stopped. `--json` prints the `TurnOutput` with the run's own facts (the
session, the turn id) at the top level, where a program looks for them;
`TurnOutput` ignores unknown keys, so the JSON still validates as one.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

from layer0 import APPEND_HISTORY, CustomEffect, HistoryAppend, ObserverHalt, TurnOutput

from ..loop.guardrails import GUARDRAIL_TRIPPED
from ..loop.limits import limit_crossed


def json_result(output: TurnOutput, session: str) -> str:
    """Return `output` as JSON with `session` and, when the turn declared one, `turn_id` first."""
    facts: dict[str, JsonValue] = {"session": session}
    turn_id = turn_id_of(output)
    if turn_id is not None:
        facts["turn_id"] = turn_id
    body: dict[str, JsonValue] = json.loads(output.model_dump_json())
    return json.dumps(facts | body, ensure_ascii=False)


def stop_note(output: TurnOutput, session: str, *, next_step: str | None = None) -> str | None:
    """Return what stopped a turn that did not complete and what to do; None if it completed.

    `next_step` says how to go on (default: `run` on the same session).
    """
    reason = output.exit_reason
    more = next_step or f"continue with: neuron-turn run PROMPT --session {session}"
    if reason == "complete":
        return None
    if reason == "max_turns":
        calls = output.metadata.turns_used
        return (
            f"the turn stopped at its limit of {calls} model call{'' if calls == 1 else 's'} "
            f"(--max-turns) before it completed; raise --max-turns, or {more}"
        )
    if reason == "budget_exhausted":
        crossed = limit_crossed(output)
        if crossed is not None:
            flag = "--max-" + crossed.limit.replace("_", "-")
            return f"{crossed.message()} ({flag}); raise {flag}, or {more}"
        spent = f"${output.metadata.cost.amount:.4f}"
        return (
            f"the turn stopped at its cost limit (--max-cost; {spent} spent); "
            f"raise --max-cost, or {more}"
        )
    if reason == "timeout":
        return (
            f"the turn stopped at its time limit (--max-duration); raise --max-duration, or {more}"
        )
    if reason == "circuit_breaker":
        return (
            "the turn stopped after too many failed tool calls in a row; `--verbose` shows "
            f"the calls and `neuron-turn history {session}` what the model saw; then {more}"
        )
    if reason == "error":
        return f"the turn ended with an error; `neuron-turn history {session}` shows what happened"
    if isinstance(reason, ObserverHalt):
        return f"a hook halted the turn: {reason.reason}; {more}"
    if reason == GUARDRAIL_TRIPPED:
        # Its message names the guardrail; an answer streamed before it tripped is not kept.
        return f"{output.message.as_text()} (the session keeps no answer it stopped); {more}"
    return f"the turn stopped before it completed ({reason.name}); {more}"


def turn_id_of(output: TurnOutput) -> str | None:
    """Return the id of the turn that produced `output`, from its history append (if any)."""
    for effect in reversed(output.effects):
        if isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
            try:
                return HistoryAppend.from_effect(effect).turn_id
            except ValueError:
                return None
    return None
