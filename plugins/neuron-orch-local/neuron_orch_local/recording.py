"""Turn records: how the orchestrators keep a record of every turn they run.

When the store is a `layer0.TurnRecordStore` (the SQLite store is), each
turn is asked for its timeline (`layer0.request_timeline`); the timeline
effect is taken out of its output before the other effects are checked and
run, so callers, policies and handlers never see it; and once the orchestrator
knows what became of the turn, one `layer0.TurnRecord` is stored: `executed`,
`accepted` (a durable orchestrator hands the effects on), `refused` (outside
the policy: none ran) or `failed` (the turn raised or was cancelled before a
part of it was kept, or its effects failed).
neuron-orch-temporal follows the same convention in its worker.

A turn run without a session for another that delegated to it records the
session of the turn that delegated (`TurnRecord.delegated_for`, the nearest
at any depth): the orchestrator runs each turn `delegating_from` its session,
and the turns its delegations run, in its task, take it from there; an
orchestrator whose turns run elsewhere (neuron-orch-temporal's worker) hands
it to `TurnRecording.start` with the turn instead.
"""

from __future__ import annotations

import contextlib
import datetime
import uuid
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

from layer0 import (
    APPEND_HISTORY,
    AgentId,
    CustomEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    HistoryAppend,
    RecordStatus,
    SessionId,
    StateStore,
    TurnInput,
    TurnOutput,
    TurnRecord,
    TurnRecordStore,
    TurnTimeline,
    WorkflowId,
    WriteMemoryEffect,
    request_timeline,
    take_timeline,
)

__all__ = ["RecordedBatchStore", "TurnRecording", "delegating_from"]

_DELEGATING: ContextVar[SessionId | None] = ContextVar("neuron_orch_local_delegating", default=None)
"""The session a turn run now was delegated for (None: none, or not delegated)."""


@contextlib.contextmanager
def delegating_from(session: SessionId | None) -> Iterator[None]:
    """Run a turn whose delegations are delegated for `session` (else for its own delegator's).

    Why: a delegated run without a session keeps, in its record, whose it is.
    """
    token = _DELEGATING.set(session if session is not None else _DELEGATING.get())
    try:
        yield
    finally:
        _DELEGATING.reset(token)


@runtime_checkable
class RecordedBatchStore(Protocol):
    """A store that applies a turn's memory effects and stores its record in one transaction.

    Why: recording a turn then costs no commit of its own (`SqliteStore` is one).
    """

    async def apply_recorded(
        self,
        effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend],
        record: TurnRecord,
    ) -> None:
        """Apply `effects` in order and store `record`, all or none; raise when none were."""
        ...


@dataclass(slots=True)
class TurnRecording:
    """One turn being recorded: what it was given, and what came back so far.

    Why: every orchestrator records turns the same way, whatever runs them.
    """

    store: TurnRecordStore
    agent: AgentId
    workflow_id: WorkflowId
    input: TurnInput
    """The input as the caller gave it (without the timeline request)."""
    started: str
    output: TurnOutput | None = None
    timeline: TurnTimeline | None = None
    turn_id: str | None = None
    """Set once the record is first built, so every write of it has one id."""
    delegated_for: SessionId | None = None
    """The session of the turn that delegated it, when it runs without one."""

    @classmethod
    def start(
        cls,
        store: StateStore,
        agent: AgentId,
        workflow_id: WorkflowId,
        input: TurnInput,
        *,
        keeps_records: bool | None = None,
        delegated_for: SessionId | None = None,
    ) -> TurnRecording | None:
        """Begin recording a turn, or return None when `store` keeps no turn records.

        `keeps_records`: whether `store` is a `TurnRecordStore`, when the caller checked once.
        `delegated_for`: the session a turn without one was delegated for, when the
        caller carries it (a worker in another process, where `delegating_from` cannot
        reach); else the one `delegating_from` set, if any.
        """
        if keeps_records is None:
            keeps_records = isinstance(store, TurnRecordStore)
        if not keeps_records:
            return None
        recording = cls(cast(TurnRecordStore, store), agent, workflow_id, input, _now())
        if input.session is None:
            recording.delegated_for = (
                delegated_for if delegated_for is not None else _DELEGATING.get()
            )
        return recording

    def turn_input(self) -> TurnInput:
        """Return the input to run the turn on: the caller's, asking for the timeline."""
        return request_timeline(self.input)

    def split(self) -> TurnRecording:
        """Return a recording of the turn's part so far (from this one's start); restart this one.

        Why: a turn that failed part-way and was kept (`layer0.PartialTurn`) has a record
        of its own, and the part that continues it a record starting when it starts.
        """
        part = TurnRecording(self.store, self.agent, self.workflow_id, self.input, self.started)
        part.delegated_for = self.delegated_for
        self.started = _now()
        return part

    def returned(self, output: TurnOutput) -> TurnOutput:
        """Take the timeline out of the turn's output; return the output without it.

        Raises:
            DispatchFailed: the turn's timeline effect is malformed.
        """
        try:
            self.output, self.timeline = take_timeline(output)
        except ValueError as exc:
            raise DispatchFailed(
                f"agent {self.agent!r} in workflow {self.workflow_id} returned a {exc}"
            ) from None
        return self.output

    def record(self, status: RecordStatus, error: BaseException | None = None) -> TurnRecord:
        """Return the record with `status` (and the error that ended the turn, if any)."""
        return TurnRecord(
            turn_id=self._turn_id(),
            session=self.input.session,
            agent=self.agent,
            workflow_id=self.workflow_id,
            started=self.started,
            input=self.input,
            output=self.output,
            timeline=[] if self.timeline is None else self.timeline.entries,
            status=status,
            error=None if error is None else _described(error),
            delegated_for=self.delegated_for,
        )

    async def store_as(self, status: RecordStatus, error: BaseException | None = None) -> None:
        """Store the record with `status` (and the error that ended the turn, if any)."""
        await self.store.record_turn(self.record(status, error))

    async def store_failure(self, status: RecordStatus, error: BaseException) -> None:
        """Store the record of a turn that ended in `error`; never hide `error` itself.

        A record that cannot be stored is noted on `error` (which the caller
        re-raises), so the first failure stays the one reported.
        """
        try:
            await self.store_as(status, error)
        except Exception as exc:
            error.add_note(f"its turn record could not be stored: {type(exc).__name__}: {exc}")

    def _turn_id(self) -> str:
        """The turn's own id: its timeline's, its history append's, else a new one (kept)."""
        if self.turn_id is None:
            self.turn_id = self._found_id()
        return self.turn_id

    def _found_id(self) -> str:
        if self.timeline is not None:
            return self.timeline.turn_id
        for effect in () if self.output is None else self.output.effects:
            if isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
                turn_id = effect.data.get("turn_id") if isinstance(effect.data, dict) else None
                if isinstance(turn_id, str) and turn_id:
                    return turn_id
        return uuid.uuid4().hex


def _now() -> str:
    """The time now as a record's `started` holds it."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _described(error: BaseException) -> str:
    """The error as a record keeps it: its class, and its message when it has one."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
