"""Sessions for the command line: an index of the conversations `run` kept, and their history.

A turn's history lives in its session scope under `messages` (written by the
orchestrator from the turn's effect). The command line also keeps a small
index in the global scope, so `neuron-turn sessions` can list conversations
on any StateStore, which has no way to enumerate scopes.

Each run adds a key of its own under `RUNS_PREFIX` and the count is the
number of those keys, so runs of one session in several processes at once
are all counted (a read-then-write counter would lose some). The index
entry's `runs` field holds only runs recorded before those keys existed.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, cast

from pydantic import JsonValue

from layer0 import Content, Layer0Error, SessionScope, StateReader, StateStore

from ..loop._convert import TOOL_FILES_TYPE, history_from_json
from ..loop._file_names import file_named, tool_files_named
from ..loop._turn_starts import turn_starts
from ..loop.standing import StandingDecision, read_standing
from ..loop.waiting import waiting_calls
from ._errors import UsageError
from ._prompt import utf8_text

if TYPE_CHECKING:
    from ..loop.fork import ForkedSession

INDEX_PREFIX: Final = "neuron-turn/sessions/"
"""Keys of the session index, in the global scope."""

RUNS_PREFIX: Final = "neuron-turn/runs/"
"""Keys of the runs, one per run (`<prefix><session>/<time>-<id>`), in the global scope."""

_TITLE_LENGTH: Final = 80


def session_id(text: str) -> str:
    """A session id the command line names: Unicode text (argparse's type for it).

    An argument whose bytes are not UTF-8 reaches Python as lone surrogates,
    which no store keeps: it is a usage error naming the byte, not a state
    file's error.
    """
    try:
        return utf8_text(text, "the session id")
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def session_to_use(text: str) -> str:
    """A session id a run goes on in or starts: `session_id`, and not blank.

    A blank one would be taken as none, the turn run in a fresh session the
    command did not name.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("a session id is not blank")
    return session_id(text)


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One conversation in the index."""

    session: str
    title: str
    updated: str
    runs: int

    def as_json(self) -> dict[str, JsonValue]:
        """Return the entry as stored and as `sessions --json` prints it."""
        return {
            "session": self.session,
            "title": self.title,
            "updated": self.updated,
            "runs": self.runs,
        }


async def record_run(store: StateStore, session: str, prompt: str) -> None:
    """Add one run of `session` to the index (created on its first run)."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    title = " ".join(prompt.split())[:_TITLE_LENGTH]
    run_key = f"{RUNS_PREFIX}{session}/{now}-{uuid.uuid4().hex[:12]}"
    await store.write("global", run_key, {"title": title})
    key = INDEX_PREFIX + session
    previous = await store.read("global", key)
    earlier = _entry(session, previous) if isinstance(previous, dict) else None
    entry = SessionEntry(
        session=session,
        title=earlier.title if earlier is not None and earlier.title else title,
        updated=now,
        runs=earlier.runs if earlier is not None else 0,
    )
    await store.write("global", key, entry.as_json())


async def record_fork(store: StateStore, forked: ForkedSession) -> None:
    """Add the session `forked` made to the index, titled by the session and turn it came from."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    source = await store.read("global", INDEX_PREFIX + forked.source)
    origin = _entry(forked.source, source).title if isinstance(source, dict) else ""
    title = f"forked from {forked.source} at turn {forked.turns} of {forked.source_turns}"
    entry = SessionEntry(forked.session, f"{title}: {origin}" if origin else title, now, 0)
    await store.write("global", INDEX_PREFIX + forked.session, entry.as_json())


async def close_sessions(store: StateReader, session: str) -> list[str]:
    """Return the kept sessions whose ids are nearest to `session` (a mistyped id), best first."""
    kept = [key.removeprefix(INDEX_PREFIX) for key in await store.list("global", INDEX_PREFIX)]
    return difflib.get_close_matches(session, kept, n=3, cutoff=0.6)


async def list_sessions(store: StateReader) -> list[SessionEntry]:
    """Return the indexed sessions, most recently used first."""
    entries = []
    for key in await store.list("global", INDEX_PREFIX):
        value = await store.read("global", key)
        if isinstance(value, dict):
            entry = _entry(key.removeprefix(INDEX_PREFIX), value)
            runs = await run_keys(store, entry.session)
            entries.append(replace(entry, runs=entry.runs + len(runs)))
    return sorted(entries, key=lambda entry: entry.updated, reverse=True)


async def run_keys(store: StateReader, session: str) -> list[str]:
    """Return the keys of `session`'s runs (those of no other session).

    A session's id may hold `/`: the runs of `a/b` are listed under the prefix
    of `a`'s too (`<prefix>a/b/<time>-<id>`), so only the keys with nothing
    after that prefix but `<time>-<id>` are `a`'s.
    """
    prefix = f"{RUNS_PREFIX}{session}/"
    return [key for key in await store.list("global", prefix) if "/" not in key[len(prefix) :]]


async def read_history(store: StateReader, session: str) -> JsonValue | None:
    """Return the stored history of `session`, or None when it has none."""
    return await store.read(SessionScope(id=session), "messages")


@dataclass(frozen=True, slots=True)
class SessionApprovals:
    """A session's approvals: the calls it waits on, and a person's standing decisions."""

    waiting: list[str]
    """The ids of the calls waiting for a decision."""
    standing: dict[str, StandingDecision]
    """The tools whose calls a person decided for good, by name."""
    unreadable: str | None = None
    """Why the session's store could not say (then both are empty)."""

    def marks(self) -> str:
        """The listing's marks for them ("" when there is nothing to say)."""
        by = {d: sorted(n for n, s in self.standing.items() if s.decision == d) for d in _SAID}
        marks = [
            *([f"waiting for approval: {', '.join(self.waiting)}"] if self.waiting else []),
            *(f"{_SAID[d]}: {', '.join(names)}" for d, names in by.items() if names),
            *([] if self.unreadable is None else [f"unreadable: {self.unreadable}"]),
        ]
        return "".join(f"[{mark}]  " for mark in marks)

    def as_json(self) -> dict[str, JsonValue]:
        """The fields `sessions --json` adds to a session's entry."""
        shown: dict[str, JsonValue] = {
            "waiting": [*self.waiting],
            "standing": {name: s.decision for name, s in self.standing.items()},
        }
        if self.unreadable is not None:
            shown["error"] = self.unreadable
        return shown


_SAID: Final = {"approve": "always run", "deny": "never run"}


async def approvals_in(store: StateReader, session: str) -> SessionApprovals:
    """What `session` waits on for approval and what a person decided for good there.

    A session whose store cannot say (a history that does not parse) is
    reported as such, so a listing of sessions goes on past it.
    """
    try:
        waiting = [call.id for call in await waiting_calls(store, session)]
        return SessionApprovals(waiting, await read_standing(store, session))
    except Layer0Error as exc:
        return SessionApprovals([], {}, str(exc))


def history_text(history: JsonValue) -> str:
    """Render stored history for people: one block per message, tool calls summarised.

    The message that starts each turn says which (`user (turn 2): ...`), as `neuron-turn
    fork --turns N` and `chat`'s `/back N` count them.

    Raises:
        HistoryFormatError: the history does not parse (a turn on the session refuses it too).
    """
    messages = history_from_json(history)
    stored = cast("list[JsonValue]", history)  # it parsed: a list of messages
    opening = {start: number for number, start in enumerate(turn_starts(messages), 1)}
    lines = []
    for index, message in enumerate(stored):
        if not isinstance(message, dict):
            continue
        content = Content.model_validate(message.get("content", ""))
        turn = opening.get(index)
        role = f"{message.get('role', '?')}" + ("" if turn is None else f" (turn {turn})")
        lines.append(f"{role}: {_content_text(content)}")
    return "\n".join(lines)


def continue_hint(session: str) -> str:
    """Return the hint that tells a user how to continue the conversation."""
    return f"session {session} (continue with --session {session})"


def _content_text(content: Content) -> str:
    if isinstance(content.root, str):
        return content.root
    parts = []
    for block in content.root:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "tool_use":
            parts.append(f"[calls {block.name}({_short(block.input)})]")
        elif block.type == "tool_result":
            marker = "error" if block.is_error else "result"
            parts.append(f"[{marker}: {_short(block.content)}]")
        elif block.type == "custom" and block.content_type == TOOL_FILES_TYPE:
            parts.append(tool_files_named(block.data))
        else:
            parts.append(file_named(block.model_dump(mode="json")) or f"[{block.type}]")
    return " ".join(parts)


def _short(value: object, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entry(session: str, value: dict[str, JsonValue]) -> SessionEntry:
    title, updated, runs = value.get("title"), value.get("updated"), value.get("runs")
    return SessionEntry(
        session=session,
        title=title if isinstance(title, str) else "",
        updated=updated if isinstance(updated, str) else "",
        runs=runs if isinstance(runs, int) else 0,
    )


async def new_session_note(store: StateReader, session: str) -> str | None:
    """Return a note when `session` holds nothing yet, naming the nearest kept id; else None.

    `--session ID` both continues a conversation and names a new one, so a
    mistyped id would silently start afresh: the note says so, as `git` offers
    the command it thinks was meant.
    """
    if await store.read("global", INDEX_PREFIX + session) is not None:
        return None
    if await read_history(store, session) is not None:
        return None
    kept = [key.removeprefix(INDEX_PREFIX) for key in await store.list("global", INDEX_PREFIX)]
    nearest = difflib.get_close_matches(session, kept, n=1, cutoff=0.6)
    meant = f"did you mean --session {nearest[0]}? " if nearest else ""
    return (
        f"session {session} is new: it starts with no history "
        f"({meant}`neuron-turn sessions` lists the kept ones)"
    )
