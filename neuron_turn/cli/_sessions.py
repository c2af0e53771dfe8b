"""Sessions for the command line: an index of the conversations `run` kept, and their history.

A turn's history lives in its session scope under `messages` (written by the
orchestrator from the turn's effect). The command line also keeps a small
index in the global scope, so `neuron-turn sessions` can list conversations
on any StateStore, which has no way to enumerate scopes.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from layer0 import Content, SessionScope, StateReader, StateStore

INDEX_PREFIX: Final = "neuron-turn/sessions/"
"""Keys of the session index, in the global scope."""

_TITLE_LENGTH: Final = 80


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
    key = INDEX_PREFIX + session
    previous = await store.read("global", key)
    runs = previous.get("runs", 0) if isinstance(previous, dict) else 0
    title = previous.get("title") if isinstance(previous, dict) else None
    entry = SessionEntry(
        session=session,
        title=title if isinstance(title, str) else " ".join(prompt.split())[:_TITLE_LENGTH],
        updated=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        runs=(runs if isinstance(runs, int) else 0) + 1,
    )
    await store.write("global", key, entry.as_json())


async def list_sessions(store: StateReader) -> list[SessionEntry]:
    """Return the indexed sessions, most recently used first."""
    entries = []
    for key in await store.list("global", INDEX_PREFIX):
        value = await store.read("global", key)
        if isinstance(value, dict):
            entries.append(_entry(key.removeprefix(INDEX_PREFIX), value))
    return sorted(entries, key=lambda entry: entry.updated, reverse=True)


async def read_history(store: StateReader, session: str) -> JsonValue | None:
    """Return the stored history of `session`, or None when it has none."""
    return await store.read(SessionScope(id=session), "messages")


def history_text(history: JsonValue) -> str:
    """Render stored history for people: one block per message, tool calls summarised."""
    if not isinstance(history, list):
        return f"(history is not a list: {history!r})"
    lines = []
    for message in history:
        if not isinstance(message, dict):
            continue
        content = Content.model_validate(message.get("content", ""))
        lines.append(f"{message.get('role', '?')}: {_content_text(content)}")
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
        else:
            parts.append(f"[{block.type}]")
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
