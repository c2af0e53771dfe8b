"""`neuron-turn show`: a stored turn's record, or the turns of a session, from the state file.

Every turn the local orchestrator runs (and a Temporal worker, on its store)
is recorded beside the history (`layer0.TurnRecord`): its model and tool
calls with tokens, cost and durations, its effects and what became of them.
`show TURN_ID` prints one; `show --session ID` and `show` alone list turns,
newest first, with the ids to pass to `show`. It only reads the file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    EffectEntry,
    HookHaltEntry,
    LimitEntry,
    ModelCallEntry,
    TimelineEntry,
    ToolCallEntry,
    TurnRecord,
    TurnRecordReader,
    TurnSummary,
)

from ..loop._exit_text import exit_reason_text
from ._closing import close_resource
from ._errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE
from ._numbers import positive_whole_number
from ._sessions import session_id
from ._state_option import add_state_argument, open_state_store
from ._visible import json_shown_on, one_line, shown_on

__all__ = ["add_show_parser", "open_records"]

_PROG: Final = "neuron-turn"
_TEXT_LIMIT: Final = 200


def add_show_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `show` command to the command line's subcommands."""
    show = commands.add_parser(
        "show",
        help="print a turn's record (model and tool calls, tokens, cost, effects), or list turns",
        description="Print the stored record of turn TURN_ID: each model call (model, tokens, "
        "cost, duration, stop reason) and tool call (input, output, duration), the effects "
        "and what became of them. Without TURN_ID, list turns, newest first (only those of "
        "--session ID when given). Reads the state file only.",
    )
    show.add_argument("turn", nargs="?", metavar="TURN_ID", help="the turn's id")
    show.add_argument("--session", type=session_id, metavar="ID", help="list this session's turns")
    show.add_argument(
        "--limit",
        type=positive_whole_number,
        default=50,
        metavar="N",
        help="list at most N turns (default: 50)",
    )
    add_state_argument(show)
    show.add_argument("--json", action="store_true", help="print JSON for machines")
    show.set_defaults(handler=show_command)


def show_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn show` (see the module doc)."""
    if args.turn is not None and args.session is not None:
        _error("give a TURN_ID or --session, not both")
        return EXIT_USAGE
    if args.turn is None:
        summaries = asyncio.run(_summaries(args.state, args.session, args.limit))
        if not summaries and args.session is not None:
            _error(f"no turns recorded for session {args.session!r}; `neuron-turn show` lists all")
            return EXIT_NOT_FOUND
        if args.json:
            print(json.dumps([s.model_dump(mode="json") for s in summaries], indent=2))
        else:
            # A title is a turn's input (a task a model delegated), a session any client's.
            print(shown_on(sys.stdout)(listing_text(summaries)))
        return EXIT_OK
    record = asyncio.run(_record(args.state, args.turn))
    if record is None:
        _error(f"no turn {args.turn!r} is recorded; `neuron-turn show` lists the turns")
        return EXIT_NOT_FOUND
    if args.json:
        print(json_shown_on(sys.stdout)(record.model_dump_json(indent=2)))
    else:
        print(shown_on(sys.stdout)(record_text(record)))
    return EXIT_OK


def open_records(state: str | None) -> TurnRecordReader:
    """Open the state file read-only, as a reader of turn records.

    Raises:
        neuron_turn.PluginError: the state store plugin is missing or failed.
        layer0.StateError: the state store keeps no turn records.
    """
    from layer0 import StateError

    store: object = open_state_store(state, read_only=True)
    if not isinstance(store, TurnRecordReader):
        raise StateError(f"the state store {store!r} keeps no turn records")
    return store


async def _record(state: str | None, turn_id: str) -> TurnRecord | None:
    store = open_records(state)
    try:
        return await store.turn_record(turn_id)
    finally:
        await close_resource(store)


async def _summaries(state: str | None, session: str | None, limit: int) -> list[TurnSummary]:
    store = open_records(state)
    try:
        return await store.turn_summaries(session=session, limit=limit)
    finally:
        await close_resource(store)


def listing_text(summaries: Sequence[TurnSummary]) -> str:
    """Render turn summaries, one line each: id, start, session, outcome, usage, title."""
    if not summaries:
        return "no turns recorded yet; run one with: neuron-turn run PROMPT"
    lines = []
    for s in summaries:
        cost = "-" if s.cost is None else f"${s.cost.amount:.4f}"
        outcome = s.status if s.exit_reason is None else exit_reason_text(s.exit_reason)
        lines.append(
            f"{one_line(s.turn_id)}  {s.started[:19]}  {one_line(s.session or '-')}  {outcome}  "
            f"{s.tokens_in}/{s.tokens_out} tok  {cost}  {s.duration / 1000:.1f}s  "
            f"{one_line(s.title)}"
        )
    return "\n".join(lines)


def record_text(record: TurnRecord) -> str:
    """Render one turn record for people: header, the timeline, the answer, the effects."""
    lines = [
        f"turn {record.turn_id}",
        f"  session {record.session or '-'}  agent {record.agent}  "
        f"workflow {record.workflow_id}  started {record.started}",
        f"  input: {_short(record.input.message.as_text() or '(not text)')}",
    ]
    output = record.output
    if output is not None:
        meta = output.metadata
        lines.append(
            f"  {exit_reason_text(output.exit_reason)}, {meta.turns_used} model call(s), "
            f"{meta.tokens_in} tokens in / {meta.tokens_out} out, ${meta.cost.amount:.4f}, "
            f"{meta.duration / 1000:.2f}s"
        )
    lines.append(f"  effects {record.status}" + (f": {record.error}" if record.error else ""))
    if record.timeline:
        lines.append("timeline:")
        lines.extend(f"  {_entry_text(entry)}" for entry in record.timeline)
    elif output is not None:
        lines.append("timeline: not recorded (the turn keeps none)")
    if output is not None:
        lines.append(f"answer: {_short(output.message.as_text() or '(not text)')}")
        kept = [e for e in output.effects if not _is_history(e)]
        if kept:
            lines.append("effects:")
            lines.extend(f"  {_short(e.model_dump_json())}" for e in kept)
    return "\n".join(lines)


def _entry_text(entry: TimelineEntry) -> str:
    if isinstance(entry, ModelCallEntry):
        cost = "price unknown" if entry.cost is None else f"${entry.cost.amount:.4f}"
        return (
            f"{_secs(entry.start)} {_secs(entry.duration, sign='')}  model {entry.model} "
            f"({entry.stop_reason})  {entry.input_tokens} in / {entry.output_tokens} out  {cost}"
        )
    if isinstance(entry, ToolCallEntry):
        arrow = "failed:" if entry.is_error else "->"
        return (
            f"{_secs(entry.start)} {_secs(entry.duration, sign='')}  tool {entry.name}"
            f"({_short(_json(entry.input), 80)}) {arrow} {_short(entry.output, 120)}"
        )
    if isinstance(entry, EffectEntry):
        return f"{_secs(entry.at)} {'':>7}  effect {_short(entry.effect.model_dump_json(), 120)}"
    if isinstance(entry, HookHaltEntry):
        return f"{_secs(entry.at)} {'':>7}  halted by a hook: {entry.reason}"
    assert isinstance(entry, LimitEntry)
    return f"{_secs(entry.at)} {'':>7}  limit reached: {exit_reason_text(entry.reason)}"


def _is_history(effect: object) -> bool:
    return isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY


def _secs(ms: int, *, sign: str = "+") -> str:
    return f"{sign}{ms / 1000:.3f}s".rjust(8)


def _json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _short(text: str, limit: int = _TEXT_LIMIT) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _error(line: str) -> None:
    print(f"{_PROG}: error: {line}", file=sys.stderr)
