"""`AgentActivities`: what a worker runs outside the workflow sandbox: turns and effects on state.

Each method is a Temporal activity, bound to the worker's agents, store and
custom effect handlers. Errors leave as `ApplicationError`s whose retry
behaviour follows their layer0 class (see `_failures`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Mapping
from contextlib import AbstractContextManager
from types import MappingProxyType
from typing import Final, TypeVar

from pydantic import ValidationError
from temporalio import activity
from temporalio.activity import ActivityCancellationDetails
from temporalio.client import WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from layer0 import (
    AgentId,
    DelegateEffect,
    EffectPolicy,
    EffectRefused,
    HandoffEffect,
    HistoryConflict,
    Layer0Error,
    PartialTurn,
    RetryableError,
    SerializationError,
    SessionId,
    StateStore,
    Turn,
    TurnError,
    TurnInput,
    TurnOutput,
    WorkflowId,
    continues_partial_turns,
    partial_of,
)
from neuron_orch_local import (
    Chain,
    CustomEffectHandler,
    DelegationAnswerer,
    EffectContext,
    Placement,
    TurnRecording,
    check_delegated_resume,
    check_policy,
    effect_owner,
    require_agent,
    untried_models,
)
from neuron_turn import PendingCall, answering, checkpointing, waiting_calls

from ._answers import run_delegation
from ._failures import FailureInfo, application_error, retry_after_ms
from ._plan import check_effects
from ._progress import execute_reporting
from .errors import PayloadTooLargeError
from .ledger import apply_once
from .messages import (
    CustomRequest,
    Delegation,
    Interruption,
    MemoryRequest,
    TurnCheckpoint,
    TurnRequest,
    TurnResult,
)
from .names import APPLY_MEMORY, CUSTOM_EFFECT, EXECUTE_TURN, WAITING_CALLS

__all__ = ["AgentActivities"]

T = TypeVar("T")

Interrupted = tuple[Interruption, BaseException | None]
"""Why a turn's output is partial, for the workflow, and the error that ended it (if any)."""

_LOST: Final = "AttemptLost"
"""An `Interruption`'s error for a part an attempt lost with no result left."""
_MAX_CHECKPOINT: Final = 256 * 1024
"""The largest checkpoint a heartbeat carries inline, in characters of JSON: Temporal
warns on payloads past 512 KiB and refuses them past 2 MiB."""

_MAX_OUTPUT: Final = 2 * 1024 * 1024 - 64 * 1024
"""The largest turn output an activity hands back inline, in bytes of JSON: Temporal
refuses payloads past 2 MiB, and the result's envelope (delegations, an interruption)
needs room."""

_NO_HANDLERS: Final[Mapping[str, CustomEffectHandler]] = MappingProxyType({})
_NO_POLICIES: Final[Mapping[AgentId, EffectPolicy]] = MappingProxyType({})
_NO_PLACEMENTS: Final[Mapping[AgentId, Placement]] = MappingProxyType({})
_OWN_SESSION_ONLY: Final = EffectPolicy()


def _check_size(agent: AgentId, returned: TurnOutput | TurnResult) -> None:
    """Refuse a result larger than Temporal carries inline, before the server refuses it.

    The whole result: a `TurnResult` carries the outputs of the delegations the
    turn waited on beside its own, each under the limit and together past it.

    Raises:
        PayloadTooLargeError: it is (not retried: its tools would run again for nothing).
    """
    size = len(returned.model_dump_json().encode("utf-8"))
    if size > _MAX_OUTPUT:
        delegated = isinstance(returned, TurnResult) and bool(returned.delegations)
        raise PayloadTooLargeError(
            agent, size, _MAX_OUTPUT, part="result" if delegated else "output"
        )


class AgentActivities:
    """The activities of one worker: run a turn, apply memory effects once, run custom effects.

    And read what a paused session waits on, for a workflow whose listing went stale.

    Every worker on a task queue must host the same agents and handlers: any
    of them may run any workflow's activities.
    """

    def __init__(
        self,
        agents: Mapping[AgentId, Turn],
        store: StateStore,
        *,
        custom_handlers: Mapping[str, CustomEffectHandler] = _NO_HANDLERS,
        ledger: StateStore | None = None,
        policies: Mapping[AgentId, EffectPolicy] = _NO_POLICIES,
        default_policy: EffectPolicy = _OWN_SESSION_ONLY,
        environments: Mapping[AgentId, Placement] = _NO_PLACEMENTS,
        external_storage: bool = False,
    ) -> None:
        """Run turns of `agents` and apply memory effects to `store`.

        Args:
            agents: the turns by name; give them `store` (or a reader of it) to read from.
            store: where memory effects go.
            custom_handlers: the handler of each `custom` effect type.
            ledger: where applied effects are recorded (default: `store`; see
                `neuron_orch_temporal.ledger`).
            policies: the effect policy of each agent, by name.
            default_policy: the policy of agents not in `policies` (default:
                their own session's memory only).
            environments: agents whose turns run in an environment (a child
                process, a sandbox), by name: the activity runs the turn with
                `placement.environment.run(input, placement.spec)` and the
                workflow carries out its effects here, as for any agent.
            external_storage: whether the worker's client keeps large payloads
                out of the history (`neuron_orch_temporal.large_payloads`), as
                `create_worker` finds out. Without, an output past 2 MiB fails
                the dispatch with `PayloadTooLargeError`, and a checkpoint past
                256 KiB is not heartbeated (the last that fits stays); with, both
                go through whole.

        Raises:
            ValueError: an agent is in both `agents` and `environments`, or
                `policies` names an agent that does not exist.
            TypeError: a value of `environments` is not a `Placement`.
        """
        placed = _placed(agents, environments)
        unknown = sorted(set(policies) - set(agents) - set(placed))
        if unknown:
            raise ValueError(f"policies name agents that do not exist: {', '.join(unknown)}")
        self._agents: dict[AgentId, Turn] = {**agents, **placed}
        self._store = store
        self._handlers = dict(custom_handlers)
        self._ledger = ledger
        self._policies = dict(policies)
        self._default_policy = default_policy
        self._external_storage = external_storage

    def all(self) -> list[object]:
        """Return the activity callables to give a `temporalio.worker.Worker`."""
        return [self.execute_turn, self.apply_memory, self.custom_effect, self.waiting_calls]

    @activity.defn(name=EXECUTE_TURN)
    async def execute_turn(self, request: TurnRequest) -> TurnOutput | TurnResult:
        """Run the agent's turn, heartbeating, then check that its effects can all run.

        Every effect must be inside the agent's effect policy (the caller's
        grant, for the turn a dispatch starts with): a turn with one outside
        fails the dispatch with `EffectRefused`, for good, and none of its
        effects run. Returns the output, or with `request.answered` a
        `TurnResult` that also names the delegations the turn waited on. With
        `request.continues`, a turn that fails part-way returns its partial
        output instead, with an `Interruption` saying whether a retry goes on
        from it (see `layer0.PartialTurn`); so does a turn cancelled because
        its workflow was (it ends there) or its worker shuts down (another
        worker goes on from it), and an attempt taking up the part a lost one
        left (see `_lost_part`).
        """
        # The worker's store keeps the turn's record (see neuron_orch_local.recording).
        recording = TurnRecording.start(
            self._store,
            request.agent,
            request.workflow_id,
            request.input,
            delegated_for=request.delegated_for,
        )
        turn_input = request.input if recording is None else recording.turn_input()
        try:
            turn = self._turn(request.agent)
            owner = effect_owner(request.agent, request.workflow_id)
            policy = (
                request.granted
                if request.granted is not None
                else self._policies.get(request.agent, self._default_policy)
            )
            answered: list[Delegation] = []
            output, interrupted = await self._outcome(request, turn, turn_input, policy, answered)
            if recording is not None:
                output = recording.returned(output)
            returned: TurnOutput | TurnResult = output
            if request.answered:
                returned = TurnResult(
                    output=output,
                    delegations=tuple(answered),
                    interrupted=None if interrupted is None else interrupted[0],
                )
            if not self._external_storage:
                _check_size(request.agent, returned)
            check_policy(output.effects, owner=owner, policy=policy, session=request.input.session)
            await check_effects(
                output.effects,
                owner=owner,
                agents=self._agents.keys(),
                custom_types=self._handlers.keys(),
                target_state=_target_state,
            )
        except asyncio.CancelledError as exc:
            # Stopped with nothing to hand back (see `_interruption`): its record says so.
            if recording is not None:
                await asyncio.shield(recording.store_failure("failed", exc))
            raise
        except Exception as exc:
            if recording is not None:
                refused = isinstance(exc, EffectRefused)
                await recording.store_failure("refused" if refused else "failed", exc)
            raise application_error(exc) from exc
        if recording is not None:
            await _store_record(recording, None if interrupted is None else interrupted[1])
        return returned

    @activity.defn(name=APPLY_MEMORY)
    async def apply_memory(self, request: MemoryRequest) -> int:
        """Apply the turn's memory effects not yet applied; return how many were."""
        try:
            return await apply_once(self._store, request, ledger=self._ledger)
        except Exception as exc:
            raise ApplicationError(
                f"the memory effects of {effect_owner(request.agent, request.workflow_id)} "
                f"were not applied: {type(exc).__name__}: {exc}",
                FailureInfo(attempts=activity.info().attempt),
                type="DispatchFailed",
                # A value that is not JSON will not become JSON on a retry; a
                # session that changed under an exclusive append stays changed.
                non_retryable=isinstance(exc, SerializationError | HistoryConflict),
            ) from exc

    @activity.defn(name=CUSTOM_EFFECT)
    async def custom_effect(self, request: CustomRequest) -> None:
        """Hand a `custom` effect to the handler of its type."""
        effect_type = request.effect.effect_type
        context = EffectContext(workflow_id=request.workflow_id, agent=request.agent)
        try:
            await self._handlers[effect_type](request.effect, context)
        except Exception as exc:
            owner = effect_owner(request.agent, request.workflow_id)
            raise ApplicationError(
                f"the handler of custom effect {effect_type!r} of {owner} failed: "
                f"{type(exc).__name__}: {exc}",
                type="DispatchFailed",
                # As a turn's error: a layer0 error says whether asking again may help
                # (`RetryableError` only); anything else is taken for a worker fault.
                non_retryable=isinstance(exc, Layer0Error) and not isinstance(exc, RetryableError),
            ) from exc

    @activity.defn(name=WAITING_CALLS)
    async def waiting_calls(self, session: SessionId) -> list[PendingCall]:
        """Return the calls paused `session` waits on now, read from the store.

        See `neuron_turn.waiting_calls`: its delegated agents' calls included,
        as they are now, which an agent resumed on its own may have changed.
        """
        try:
            return await waiting_calls(self._store, session)
        except Exception as exc:
            raise application_error(exc) from exc

    async def _outcome(
        self,
        request: TurnRequest,
        turn: Turn,
        turn_input: TurnInput,
        policy: EffectPolicy,
        answered: list[Delegation],
    ) -> tuple[TurnOutput, Interrupted | None]:
        """Run the turn, or take up what a lost attempt of it left; return its output.

        With the output, for a partial one, why it is partial (see `_interruption`).
        """
        lost = _lost_part(request, answered)
        if lost is not None:
            return lost
        limit = None if self._external_storage else _MAX_CHECKPOINT
        checkpoints = _Checkpoints(request, turn, answered, limit)
        with self._answering(request, policy, answered), checkpoints.taking():
            if request.progress:
                running = execute_reporting(turn, turn_input, request.workflow_id)
            else:
                running = turn.execute(turn_input)
            try:
                return await _heartbeating(running, checkpoints), None
            except (TurnError, asyncio.CancelledError) as exc:
                interruption = _interruption(exc, request, turn)
                partial = partial_of(exc)
                if interruption is None or partial is None:
                    raise
                return partial.output, (interruption, exc)

    def _answering(
        self, request: TurnRequest, policy: EffectPolicy, answered: list[Delegation]
    ) -> AbstractContextManager[None]:
        """Answer the turn's delegations with their agents' outputs (see `_answers`).

        Each delegation answered is added to `answered`.
        """
        if request.chain is None or request.policy is None:
            return contextlib.nullcontext()  # a workflow from before answers existed
        answerer = self._answerer(
            request,
            answered,
            request.chain,
            policy,
            request.input.session,
            answers=request.policy.answer_delegations,
        )
        return answering(answerer)

    def _answerer(
        self,
        request: TurnRequest,
        answered: list[Delegation],
        chain: Chain,
        policy: EffectPolicy,
        session: SessionId | None,
        *,
        answers: bool = True,
    ) -> DelegationAnswerer:
        """What answers the delegations of a turn at `chain` within `policy` (see `_answers`).

        It refuses at once what `check_effects` would refuse after the turn;
        without `answers` it only does that, leaving delegations declared.
        """
        return DelegationAnswerer(
            run_child=functools.partial(run_delegation, request, answered) if answers else None,
            chain=chain,
            policy=policy,
            session=session,
            agents=self._agents.keys(),
            check_child=functools.partial(self._check_delegation, request) if answers else None,
            running=_target_state,
        )

    async def _check_delegation(
        self, request: TurnRequest, effect: DelegateEffect, chain: Chain
    ) -> None:
        """Check the decisions a resumed delegation hands its agent, running nothing.

        With the answerer its own delegations get (it only checks: it runs nothing).
        """
        policy = self._policies.get(effect.agent, self._default_policy)
        answerer = self._answerer(request, [], chain, policy, effect.input.session)
        await check_delegated_resume(self._agents.get(effect.agent), effect.input, answerer)

    def _turn(self, agent: AgentId) -> Turn:
        require_agent(agent, self._agents)
        return self._agents[agent]


async def _store_record(recording: TurnRecording, error: BaseException | None) -> None:
    """Store the record of a turn that ran, saying so in the log when the store refuses it.

    Not raised: the activity would fail, and Temporal run the turn (its model calls, its
    tools) again for want of its record, then lose its history with the error. The
    history goes on to the `apply_memory` activity, which says whether the store took it.
    """
    try:
        await recording.store_as("accepted", error)
    except Exception as exc:
        activity.logger.warning(
            "the turn record of agent %r in workflow %s could not be stored: %s: %s",
            recording.agent,
            recording.workflow_id,
            type(exc).__name__,
            exc,
        )


def _placed(
    agents: Mapping[AgentId, Turn], environments: Mapping[AgentId, Placement]
) -> dict[AgentId, Turn]:
    """The placed agents, as turns (a `Placement` runs its environment when executed)."""
    given: Mapping[AgentId, object] = environments  # checked: callers pass anything
    for name, placement in given.items():
        if name in agents:
            raise ValueError(f"agent {name!r} is in both `agents` and `environments`; keep one")
        if not isinstance(placement, Placement):
            hint = (
                f"; an environment is named by building it: Placement(neuron_turn."
                f"get_environment({placement!r}, recipe, state=store))"
                if isinstance(placement, str)
                else ""
            )
            raise TypeError(f"environments[{name!r}] is not a Placement: {placement!r}{hint}")
    return dict(environments)


def _takes_parts(request: TurnRequest) -> bool:
    """Whether the workflow carries out a partial turn and goes on (`Interruption`)."""
    return request.continues and request.answered


def _lost_part(
    request: TurnRequest, answered: list[Delegation]
) -> tuple[TurnOutput, Interrupted] | None:
    """The part an earlier attempt of this turn left in its heartbeats, when it was lost.

    An attempt lost with no result (its worker killed, its time out) heartbeat
    the turn so far after each round of tool calls (`_Checkpoints`). Rather
    than run those tools again, this attempt hands the latest to the workflow
    as a partial turn, which carries it out and runs its continuation next;
    the delegations it had waited on are added to `answered`. None when
    there is none: the turn runs (again) whole. A checkpoint this
    worker cannot read (written by another version) is logged, and the turn
    runs again whole.
    """
    info = activity.info()
    if info.attempt == 1 or not info.heartbeat_details or not _takes_parts(request):
        return None
    try:
        checkpoint = TurnCheckpoint.model_validate_json(info.heartbeat_details[0])
    except (ValidationError, TypeError) as exc:
        activity.logger.warning("the turn runs again whole: its checkpoint is unreadable: %s", exc)
        return None
    answered.extend(checkpoint.delegations)
    interruption = Interruption(
        continuation=checkpoint.continuation,
        error=_LOST,
        message=f"attempt {info.attempt - 1} of the turn was lost after this part",
        retry_after_ms=0,  # Temporal waited before this attempt already
        attempts=info.attempt,
    )
    return checkpoint.output, (interruption, None)


class _Checkpoints:
    """The latest checkpoint of the turn an attempt runs, carried by its heartbeats.

    See `neuron_turn.checkpointing`: after each round of tool calls the turn
    hands over its partial turn, kept here as the heartbeat details a later
    attempt reads (`_lost_part`). One larger than `limit` characters is not
    taken, so the last one that fits stays (no limit: large payloads are kept
    out of the history); so is one declaring a handoff, which only a finished
    turn may.
    """

    def __init__(
        self, request: TurnRequest, turn: Turn, answered: list[Delegation], limit: int | None
    ) -> None:
        self._request = request
        self._limit = limit
        self._reads = continues_partial_turns(turn)
        self._answered = answered
        self.details: tuple[str, ...] = ()
        """The latest checkpoint, as JSON, for every heartbeat to carry (or none)."""

    def taking(self) -> AbstractContextManager[None]:
        """Take the turn's checkpoints inside this block, when its workflow takes parts."""
        if not _takes_parts(self._request):
            return contextlib.nullcontext()
        return checkpointing(self.take)

    def take(self, partial: PartialTurn) -> None:
        """Keep `partial` as the latest checkpoint and heartbeat it."""
        if any(isinstance(effect, HandoffEffect) for effect in partial.output.effects):
            return
        continuation = partial.continuation if self._reads else self._request.input
        checkpoint = TurnCheckpoint(
            output=partial.output, continuation=continuation, delegations=tuple(self._answered)
        )
        text = checkpoint.model_dump_json()
        if self._limit is not None and len(text) > self._limit:
            return
        self.details = (text,)
        activity.heartbeat(*self.details)


def _interruption(
    exc: TurnError | asyncio.CancelledError, request: TurnRequest, turn: Turn
) -> Interruption | None:
    """What the workflow gets instead of a failure: a partial turn to carry out.

    Marked `last` when the error is not one a retry may fix and the turn is
    not a fallback chain with models left to try (`untried_models`), or the
    workflow cancelled the turn; whether the attempts allow another is the
    workflow's to count. What runs next is the partial's continuation, or,
    for a turn that does not read continuations, its input again (the part
    is kept all the same: the turn reads the session, and would not
    otherwise know those tools ran). None (fail as before: the turn is
    retried whole, or not at all) when the workflow cannot take one, the
    error offers none, the partial turn declares a handoff (only a finished
    one may), or Temporal cancelled the activity for a reason it will not
    take a result after (a timeout, a reset).
    """
    partial = partial_of(exc)
    if not _takes_parts(request) or partial is None:
        return None
    if any(isinstance(effect, HandoffEffect) for effect in partial.output.effects):
        return None
    if isinstance(exc, asyncio.CancelledError):
        message, last = _cancelled_by(activity.cancellation_details())
        if message is None:
            return None
    else:
        message, last = str(exc), not (isinstance(exc, RetryableError) or untried_models(exc))
    return Interruption(
        continuation=partial.continuation if continues_partial_turns(turn) else request.input,
        error=type(exc).__name__,
        message=message,
        retry_after_ms=retry_after_ms(getattr(exc, "retry_after", None)),
        attempts=activity.info().attempt,
        last=last,
    )


def _cancelled_by(details: ActivityCancellationDetails | None) -> tuple[str | None, bool]:
    """Why Temporal cancelled the turn's activity, and whether its turn ends there.

    (None, ...) for a cancellation whose activity's result Temporal no longer takes.
    """
    if details is not None and details.cancel_requested:
        return "its workflow was cancelled", True
    if details is not None and details.worker_shutdown:
        return "its worker shut down", False
    return None, True


async def _heartbeating(work: Awaitable[T], checkpoints: _Checkpoints) -> T:
    """Await `work`, heartbeating three times per heartbeat timeout.

    A worker that dies stops heartbeating, so Temporal retries the turn
    elsewhere after the heartbeat timeout rather than the start-to-close one;
    each heartbeat carries the latest checkpoint, which Temporal keeps for the
    next attempt. Heartbeats also carry cancellation to the activity, which
    stops `work` and waits for it (see `_stopped`).
    """
    timeout = activity.info().heartbeat_timeout
    every = timeout.total_seconds() / 3 if timeout else None
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=every)
            if done:
                return task.result()
            activity.heartbeat(*checkpoints.details)
    except asyncio.CancelledError:
        return await _stopped(task)
    finally:
        task.cancel()


async def _stopped(work: asyncio.Future[T]) -> T:
    """Stop `work` as Temporal cancels the activity; return its result if it ends all the same.

    Otherwise its own cancellation is raised: a turn's says what it had done
    (`layer0.partial_of`), for the activity to hand to its workflow.
    """
    work.cancel()
    current = asyncio.current_task()
    if current is not None:
        current.uncancel()  # the activity goes on to report what the turn did
    return await work


async def _target_state(workflow_id: WorkflowId) -> bool | None:
    try:
        description = await activity.client().get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        # An id the server refuses to look up (empty) names no workflow either; raised,
        # it was taken for a worker fault, and the turn ran again for the same refusal.
        if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            return None
        raise
    return description.status == WorkflowExecutionStatus.RUNNING
