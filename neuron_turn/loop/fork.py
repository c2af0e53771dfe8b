"""Forking a session: a new session holding the first turns of another, the original kept.

A conversation that went astray three turns ago need not start over:
`fork_session(store, "trip", turns=2)` makes a new session whose history is
the first two turns of `trip`, message for message, and the next turn on it
goes on from there. Nothing of `trip` is changed or deleted. (pydantic-ai's
users slice `message_history` for this, which can cut between a tool call and
its result; the OpenAI Agents SDK's sessions `pop_item`, which loses what it
removes.)

- Turns are counted as a person counts them in `neuron-turn history`: each
  message sent on the session starts one, a tool's result never does
  (`_turn_starts` says why that, and not the turn records). The history is cut
  only where a turn starts, never between a tool call and its result.
- The new history is written in one `append_history` that expects an empty
  session (`expected_length=0`): it is all there or not at all, and a session
  that holds anything already is refused, unchanged.
- A cut after a turn that waits for approval is refused: both sessions would
  hold the same calls, and approving them in both would run each tool twice.
- The files the copied messages hold (images and documents a tool returned,
  `TOOL_FILES_TYPE` blocks, and those of a user's message) are inside the
  messages, not under keys of their own, so the copy carries them: the fork's
  history refers to nothing it does not hold.
- The fork starts with nothing else: no standing decisions (`standing`: a
  person decided those for the original conversation, and may not for this
  one), no memory the model wrote in the session's scope (the store keeps
  only its latest value, which turns after the cut may have written), and no
  counts of a turn kept in part (a continuation of the fork counts its limits
  afresh).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryConflict,
    HistoryStore,
    NonRetryableError,
    SessionId,
    SessionScope,
)

from ._convert import HistoryFormatError, history_from_json
from ._turn_starts import turn_starts
from .approval import PendingCall, pending_in
from .provider import ProviderMessage

__all__ = [
    "ForkError",
    "ForkedSession",
    "PendingCallsError",
    "TargetExistsError",
    "TurnsOutOfRangeError",
    "UnknownSessionError",
    "UnreadableHistoryError",
    "fork_session",
]


class ForkError(NonRetryableError):
    """A fork that cannot be made (base of the fork errors); nothing was written."""


class UnknownSessionError(ForkError, LookupError):
    """The session to fork has no history."""

    def __init__(self, session: SessionId, close: Sequence[SessionId] = ()) -> None:
        """`close`: the kept sessions whose ids are nearest to `session`, if any."""
        self.session = session
        self.close = tuple(close)
        meant = f" (did you mean {', '.join(map(repr, self.close))}?)" if self.close else ""
        super().__init__(f"no session {session!r} to fork: it has no history{meant}")


class TurnsOutOfRangeError(ForkError, ValueError):
    """The number of turns to copy is not one the session has."""

    def __init__(self, session: SessionId, turns: int, count: int) -> None:
        """`turns` were asked of `session`, which has `count`."""
        self.session, self.turns, self.count = session, turns, count
        if count == 0:
            fits = "it has no turn (no message sent on it) to fork"
        else:
            fits = f"it has {_turns(count)}; give " + ("1" if count == 1 else f"1 to {count}")
        super().__init__(f"cannot fork the first {turns} turns of session {session!r}: {fits}")


class TargetExistsError(ForkError):
    """The session to fork into holds something already: a fork goes to a new session."""

    def __init__(self, session: SessionId, holds: str) -> None:
        """`holds` says what `session` holds ("a history of 4 messages")."""
        self.session = session
        super().__init__(
            f"session {session!r} already holds {holds}; a fork goes to a new session, "
            "so name one that holds nothing (or let a fresh id be made)"
        )


class PendingCallsError(ForkError):
    """The cut would end on a turn waiting for approval of tool calls."""

    def __init__(
        self, session: SessionId, turns: int, pending: Sequence[PendingCall], fits: int | None
    ) -> None:
        """Turn `turns` of `session` waits on `pending`; `fits`: the nearest fork that would not."""
        self.session, self.turns, self.pending, self.fits = session, turns, tuple(pending), fits
        calls = ", ".join(f"{call.id} ({call.name})" for call in self.pending)
        instead = (
            f"fork its first {_turns(fits)} instead, or decide them"
            if fits is not None
            else "no earlier turn ends without waiting; decide them"
        )
        super().__init__(
            f"turn {turns} of session {session!r} waits for approval of {calls}: a fork there "
            "would wait on the same calls, and approving them in both sessions would run them "
            f"twice; {instead} in {session!r} first and fork after"
        )


class UnreadableHistoryError(ForkError, ValueError):
    """The stored history of the session to fork does not parse."""

    def __init__(self, session: SessionId, why: str) -> None:
        """`why` says what does not parse."""
        self.session = session
        super().__init__(f"the history of session {session!r} cannot be forked: {why}")


@dataclass(frozen=True, slots=True)
class ForkedSession:
    """A session `fork_session` made: its id, the session it came from and what it holds."""

    session: SessionId
    """The new session."""
    source: SessionId
    """The session it was forked from, left as it was."""
    turns: int
    """How many of the source's turns it holds (the first ones)."""
    source_turns: int
    """How many turns the source had."""
    messages: int
    """How many messages its history holds."""


async def fork_session(
    store: HistoryStore,
    source: SessionId,
    into: SessionId | None = None,
    *,
    turns: int | None = None,
) -> ForkedSession:
    """Copy the first `turns` turns (None: all) of `source`'s history into a new session.

    `into` names the new session (None: a fresh id, as `neuron-turn run` makes
    them). See the module doc for what is copied and what is not.

    Raises:
        UnknownSessionError: `source` has no history.
        UnreadableHistoryError: `source`'s stored history does not parse.
        TurnsOutOfRangeError: `turns` is below 1 or more than `source` has.
        PendingCallsError: turn `turns` waits for approval of tool calls.
        TargetExistsError: `into` holds a history or other state already.
        layer0.StateError: the store failed; nothing was written.
    """
    if not isinstance(store, HistoryStore):
        raise TypeError(f"fork_session needs a layer0.HistoryStore, not {type(store).__name__}")
    if into == "":
        raise ValueError("into: a session id is not empty (None makes a fresh one)")
    stored = await store.read(SessionScope(id=source), HISTORY_KEY)
    if stored is None or stored == []:
        raise UnknownSessionError(source)
    kept, history = _parsed(source, stored)
    starts = turn_starts(history)
    count = len(starts)
    wanted = count if turns is None else turns
    if not 1 <= wanted <= count:
        raise TurnsOutOfRangeError(source, wanted, count)
    ends = [*starts[1:], len(history)]  # where the first 1, 2, ... turns end
    _check_not_waiting(source, history, ends, wanted)
    target = into if into is not None else uuid.uuid4().hex[:12]
    await _check_empty(store, target)
    end = ends[wanted - 1]
    # One append, expecting an empty session: the fork is all there or not at all, and a
    # session written since the check above is refused all the same. The files the
    # messages refer to are inside them, so nothing need be written before it (anything
    # written first would land in a session that may turn out not to be empty).
    append = HistoryAppend(
        session=target,
        turn_id=f"fork-{uuid.uuid4().hex}",
        messages=kept[:end],
        expected_length=0,
    )
    try:
        await store.append_history(append)
    except HistoryConflict:
        raise TargetExistsError(target, "a history written while it was forked") from None
    return ForkedSession(target, source, wanted, count, end)


def _parsed(session: SessionId, stored: JsonValue) -> tuple[list[JsonValue], list[ProviderMessage]]:
    """`stored` as kept and as read (one message for one), or why it cannot be forked."""
    if not isinstance(stored, list):
        raise UnreadableHistoryError(session, f"it is not a list but {type(stored).__name__}")
    try:
        return stored, history_from_json(stored)
    except HistoryFormatError as exc:
        raise UnreadableHistoryError(session, f"it does not parse, {exc}") from None


def _check_not_waiting(
    session: SessionId, history: Sequence[ProviderMessage], ends: Sequence[int], turns: int
) -> None:
    """Refuse a cut after `turns` turns whose last waits for approval, naming one that does not."""
    pending = pending_in(history[: ends[turns - 1]])
    if not pending:
        return
    fits = next(
        (
            earlier
            for earlier in range(turns - 1, 0, -1)
            if not pending_in(history[: ends[earlier - 1]])
        ),
        None,
    )
    waiting = [PendingCall(id=call.id, name=call.name, input=call.input) for call in pending]
    raise PendingCallsError(session, turns, waiting, fits)


async def _check_empty(store: HistoryStore, session: SessionId) -> None:
    """Refuse `session` when it holds anything: a history, standing decisions, memory."""
    scope = SessionScope(id=session)
    history = await store.read(scope, HISTORY_KEY)
    if isinstance(history, list) and history:
        raise TargetExistsError(session, f"a history of {len(history)} message(s)")
    if history is not None and not isinstance(history, list):
        raise TargetExistsError(session, "a history (one that is not a list)")
    others = sorted(key for key in await store.list(scope, "") if key != HISTORY_KEY)
    if others:
        raise TargetExistsError(session, f"state of its own (keys {', '.join(others)})")


def _turns(count: int) -> str:
    return "1 turn" if count == 1 else f"{count} turns"
