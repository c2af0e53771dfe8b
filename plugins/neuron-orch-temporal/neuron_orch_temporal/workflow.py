"""`AgentWorkflow`: one dispatch as a durable Temporal workflow.

The workflow runs the agent's turn as an activity, then carries out the
effects the turn declared, in declaration order as neuron-orch-local does:

- memory effects (writes, deletes and the `append_history` custom effect
  that records the turn in its session, see `layer0.history`): all of the
  turn's together, at the position of the first, in one idempotent activity
  (see `neuron_orch_temporal.ledger`), which the workflow's cancellation waits
  for rather than cuts short; an effect before them that fails or is
  cancelled has them applied all the same before its error goes on;
- `delegate`: a child workflow with a deterministic id,
  `<workflow>/t<turn>/d<index>-<agent>`; consecutive delegations fan out
  concurrently, and their outputs are recorded in effect order (a
  delegation the turn waited on, its `delegate` call answered, is a workflow
  the turn's activity started; the activity returns it with the output, and
  it is recorded before the turn's declared ones, as neuron-orch-local does);
- `signal`: a Temporal signal to the target workflow's inbox;
- `log`: the workflow logger (silent during replay), records as
  neuron-orch-local's `emit_log` makes them;
- `custom`: an activity calling the worker's handler of its type;
- `handoff`: last, a child workflow (`<workflow>/t<turn>/h-<agent>`) whose
  output becomes this workflow's; signals to this workflow go on to it.

A turn that fails after some of its tools ran, with an error Temporal would
retry, comes back as its partial output (`layer0.PartialTurn`): its effects
are carried out as above, and after the retry's wait its continuation runs
as the next turn, so the tools that ran do not run again. A turn stopped
because its worker shut down goes on the same way on another worker; one
stopped because the workflow was cancelled (through Temporal: `temporal
workflow cancel`, `WorkflowHandle.cancel`) has its part carried out, then
the workflow ends cancelled; its `neuron.kept` query then answers that part
and its continuation, for the dispatch to hand on. A part that reaches the
workflow together with its cancellation (its worker stopped after the turn's
activity returned it, and the next worker brings both) is kept the same way.

A turn exiting with `CustomExit(name="await_signal")` keeps the workflow
open: the next signal starts another turn of the same agent. A turn exiting
`{"custom": "awaiting_approval"}` keeps it open too, until the `decide`
update brings the decisions or `TurnPolicy.approval_timeout` denies the calls;
then the resume turn runs (see `neuron_orch_temporal.approvals`).

Workflow code must be deterministic: no clocks, randomness or I/O here,
only `workflow.*` calls. Models, and neuron-orch-local's conventions (the
chain, the handoff input, log records, query answers), are imported through
the sandbox unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    FailureError,
    is_cancelled_exception,
)

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel, JsonValue

    from layer0 import (
        APPEND_HISTORY,
        AgentId,
        CustomEffect,
        CustomExit,
        DelegateEffect,
        DeleteMemoryEffect,
        DispatchFailed,
        Effect,
        EffectPolicy,
        HandoffEffect,
        Layer0Error,
        LogEffect,
        SessionId,
        SignalEffect,
        SignalPayload,
        TurnInput,
        TurnOutput,
        WriteMemoryEffect,
    )
    from neuron_orch_local import Chain, answer_query, emit_log, handoff_input
    from neuron_turn import (
        AWAITING_APPROVAL,
        Decision,
        DuplicateDecisionError,
        InvalidEditedInputError,
        MalformedDecisionsError,
        MissingDecisionError,
        PendingCall,
        UnknownDecisionError,
        pending_approvals,
        resume_input,
    )

    from ._delegating import delegating
    from ._failures import MAX_RETRY_AFTER_MS, FailureInfo, memory_not_applied, workflow_failure
    from ._query import WorkflowView
    from .approvals import (
        AwaitingApproval,
        DecideRequest,
        Pause,
        Settled,
        check_decisions,
        timed_out,
    )
    from .errors import PayloadTooLargeError
    from .inputs import signal_input
    from .messages import (
        CustomRequest,
        Delegation,
        DispatchResult,
        IndexedMemoryEffect,
        Interruption,
        KeptPart,
        MemoryRequest,
        TurnRequest,
        TurnResult,
        WorkflowInput,
    )
    from .names import (
        APPLY_MEMORY,
        APPROVALS_QUERY,
        AWAIT_SIGNAL,
        CUSTOM_EFFECT,
        DECIDE_UPDATE,
        EXECUTE_TURN,
        INBOX_SIGNAL,
        KEPT_QUERY,
        PROGRESS_QUERY,
        PROGRESS_SIGNAL,
        RELIST_SIGNAL,
        SETTLED_UPDATE,
        WAITING_CALLS,
        WORKFLOW_TYPE,
    )
    from .policy import TurnPolicy

__all__ = ["AgentWorkflow"]

_AWAITING: Final = CustomExit(name=AWAIT_SIGNAL)
_LISTS_ANSWERED: Final = "lists-answered-delegations"
"""The patch after which a turn's answered delegations are listed with the declared ones."""
_CONTINUES: Final = "continues-interrupted-turns"
"""The patch after which a turn that failed part-way is carried out and continued."""
_KEEPS_CANCELLED: Final = "keeps-cancelled-turns"
"""The patch after which a cancelled workflow keeps its turn's part and ends cancelled."""
_APPLIES_MEMORY_ON_FAILURE: Final = "applies-memory-when-an-effect-before-it-fails"
"""The patch after which a turn's memory effects are applied when an effect before them fails."""
_APPLIES_MEMORY_THROUGH_CANCELLATION: Final = "applies-memory-through-cancellation"
"""The patch after which the workflow's cancellation waits for its memory effects to apply."""
_ASKS_AGAIN: Final = "asks-again-for-refused-decisions"
"""The patch after which decisions a resume refuses are asked for again, not failed with."""
_ASKED_AGAIN: Final = frozenset(
    cls.__name__
    for cls in (DuplicateDecisionError, InvalidEditedInputError, MalformedDecisionsError)
)
"""The refusals of decisions that the same calls can be decided again after.

Not ids that do not fit: `decide` checked them against the listed calls, so at
the resume they mean the listing is stale (`_STALE`).
"""
_RELISTS: Final = "asks-again-for-the-calls-waiting-now"
"""The patch after which a stale listing of a delegated agent's calls is made again."""
_STALE: Final = frozenset(cls.__name__ for cls in (MissingDecisionError, UnknownDecisionError))
"""The refusals of decisions that `decide` accepted for the listed calls: the listing is stale."""
_RELISTS_AT_ONCE: Final = "relists-when-a-delegated-agent-pauses-again"
"""The patch after which a delegated agent paused again on its own says so, and the
workflow whose pause lists its calls lists them anew as it waits."""
_KEEPS_RACED: Final = "keeps-turns-racing-cancellation"
"""The patch after which a turn's result that arrives with the workflow's cancellation is kept."""
_BOUNDS_FAN_OUT: Final = "bounds-concurrent-delegations"
"""The patch after which a turn's delegations run at most `max_concurrent_delegations` at once."""
_NO_TIME: Final = timedelta(milliseconds=1)
"""The shortest wait for decisions: a pause whose time ran out during its turn."""


@workflow.defn(name=WORKFLOW_TYPE)
class AgentWorkflow:
    """One dispatch: an agent's turns, their effects, and the handoff's result."""

    @workflow.init
    def __init__(self, params: WorkflowInput) -> None:
        """Set up the view queries read, before the first turn starts."""
        self._policy = params.policy
        self._granted = params.granted
        self._delegated_for = params.delegated_for
        self._payload_limit = params.payload_limit
        self._progress = params.progress
        self._view = WorkflowView(
            workflow_id=workflow.info().workflow_id, agent=params.agent, parent=params.parent
        )
        # How many inbox signals, oldest first, a turn or the handoff has taken.
        self._consumed = 0
        self._handoff: workflow.ChildWorkflowHandle[AgentWorkflow, DispatchResult] | None = None
        self._forwarding = asyncio.Lock()
        # Approvals: how many pauses so far, the one waiting, its decisions once accepted.
        self._pauses = 0
        self._pause: Pause | None = None
        self._waiting: AwaitingApproval | None = None
        self._decided: DecideRequest | None = None
        # The pause each keyed `decide` decided (`DecideRequest.key`).
        self._keys = {} if params.decided_by is None else {params.decided_by: 0}
        # The workflow whose pause lists this one's calls too (`WorkflowInput.held`), whether
        # the last pause was decided by other than it (directly, or by the timeout), and
        # whether a delegated agent this one's pause lists said it waits on other calls.
        self._held_by = params.parent if params.held else None
        self._alone = False
        self._relist = False
        self._finished = False
        # When the last turn's activity was scheduled (workflow time), and the
        # delegated agents its pause holds (`Delegation.held`).
        self._turn_started = workflow.now()
        self._held: tuple[str, ...] = ()
        # The part of the running turn carried out last, and what goes on from it: where
        # a later dispatch goes on should this workflow end before the turn does.
        self._kept: KeptPart | None = None

    @workflow.run
    async def run(self, params: WorkflowInput) -> DispatchResult:
        """Run the agent, its effects and its handoff; fail with a layer0 error kind."""
        view = self._view
        try:
            await self._drive(params.agent, params.input, params.chain)
        except asyncio.CancelledError:
            if workflow.patched(_KEEPS_CANCELLED):
                self._end_cancelled()
            await self._cancel_held()
            raise
        except (ActivityError, ChildWorkflowError, ApplicationError, Layer0Error) as exc:
            if _cancelled(exc):
                self._end_cancelled()
                raise
            failure = workflow_failure(exc)
            view.status, view.error = "failed", f"{failure.type}: {failure.message}"
            self._finished = True
            raise failure from None
        assert view.output is not None
        result = DispatchResult(
            workflow_id=view.workflow_id,
            agent=view.agent,
            output=view.output,
            route=tuple(view.route),
            delegations=tuple(view.delegations),
        )
        too_large = self._too_large(result, result.agent, "result")
        if too_large is not None:
            view.status, view.error = "failed", f"{too_large.type}: {too_large.message}"
            self._finished = True
            raise too_large
        view.status = "completed"
        self._finished = True
        # A `settled` update waiting for this end answers before the workflow closes.
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result

    def _too_large(self, payload: BaseModel, agent: AgentId, part: str) -> ApplicationError | None:
        """The failure for a payload past the limit the starter gave (None: it fits).

        `part`: what it is to `agent`, its `"result"` or a turn's `"input"`. Every part
        under the limit, their sum past it: the server would refuse the workflow's task
        on every retry (its completion, the turn's activity, the child's start), and its
        caller wait for ever.
        """
        limit = self._payload_limit
        if limit is None:
            return None
        size = len(payload.model_dump_json().encode("utf-8"))
        if size <= limit:
            return None
        error = PayloadTooLargeError(agent, size, limit, part=part)
        message = f"{error!s} (workflow {self._view.workflow_id})"
        return ApplicationError(message, type=type(error).__name__, non_retryable=True)

    def _end_cancelled(self) -> None:
        """Mark the workflow ended by its cancellation, as neuron-orch-local marks a dispatch."""
        reason = workflow.cancellation_reason()
        self._view.status = "failed"
        self._view.error = f"CancelledError: {reason}" if reason else "CancelledError"
        self._finished = True  # a `settled` update waiting for the end answers

    async def _cancel_held(self) -> None:
        """Cancel the delegated agents the last turn's pause holds, as its delegations are.

        Their workflows wait for decisions only this one's resume would send. One
        that ended meanwhile (decided directly, timed out) is left as it is.
        """
        for child in self._held:
            try:
                await workflow.get_external_workflow_handle(child).cancel()
            except FailureError as exc:
                workflow.logger.info("held delegation %s not cancelled: %s", child, exc.message)

    @workflow.signal(name=INBOX_SIGNAL)
    async def inbox(self, payload: SignalPayload) -> None:
        """Keep `payload` in the inbox; pass it on to a running handoff."""
        self._view.inbox.append(payload)
        await self._forward()

    @workflow.signal(name=RELIST_SIGNAL)
    def relist(self) -> None:
        """A delegated agent this workflow's pause lists paused again on its own: list anew."""
        self._relist = True

    @workflow.update(name=DECIDE_UPDATE)
    def decide(self, request: DecideRequest) -> int:
        """Take the decisions for the pause that waits (validated first); return its number.

        A key taken before is answered with the pause it decided; nothing changes.
        """
        key = request.key
        if key is not None:
            if key in self._keys:
                return self._keys[key]
            self._keys[key] = self._pauses
        self._decided = request
        return self._pauses

    @decide.validator
    def _check_decide(self, request: DecideRequest) -> None:
        """Reject decisions that do not decide the waiting pause's calls exactly once."""
        if request.key is not None and request.key in self._keys:
            return
        waiting = self._waiting if self._decided is None else None
        check_decisions(waiting, request, workflow_id=self._view.workflow_id)

    @workflow.update(
        name=SETTLED_UPDATE, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON
    )
    async def settled(self, after: int) -> Settled:
        """Wait for a pause later than the `after`th, or the end; answer with that pause."""
        await workflow.wait_condition(lambda: self._pauses > after or self._finished)
        return Settled(pause=self._pause if self._pauses > after else None)

    @workflow.query(name=APPROVALS_QUERY)
    def approvals(self) -> list[AwaitingApproval]:
        """The pause waiting for decisions, if any (a list of at most one).

        None once the workflow ended: one cancelled as it waited waits no more.
        """
        waiting = self._waiting
        return [] if waiting is None or self._decided is not None or self._finished else [waiting]

    @workflow.query(name=KEPT_QUERY)
    def kept(self) -> KeptPart | None:
        """The part of its turn this workflow kept last (None: nothing to go on from).

        Asked once it ended cancelled: what its stopped turn kept.
        """
        return self._kept

    @workflow.signal(name=PROGRESS_SIGNAL)
    def progress(self, event: JsonValue) -> None:
        """Keep one progress event a turn's activity reported."""
        self._view.progress.append(event)

    @workflow.query(name=PROGRESS_QUERY)
    def progress_query(self, after: int = 0) -> list[JsonValue]:
        """Return the progress events from index `after` on."""
        return self._view.progress[after:]

    @workflow.query(name="status")
    def status(self, params: JsonValue = None) -> JsonValue:
        """Status, agent, exit reason, parent, route and error."""
        return answer_query(self._view, "status")

    @workflow.query(name="inbox")
    def inbox_query(self, params: JsonValue = None) -> JsonValue:
        """The signals received, oldest first."""
        return answer_query(self._view, "inbox")

    @workflow.query(name="output")
    def output(self, params: JsonValue = None) -> JsonValue:
        """The last turn output, or null."""
        return answer_query(self._view, "output")

    @workflow.query(name="delegations")
    def delegations(self, params: JsonValue = None) -> JsonValue:
        """The delegations' agents, workflow ids and outputs."""
        return answer_query(self._view, "delegations")

    async def _drive(self, agent: AgentId, turn_input: TurnInput, chain: Chain) -> None:
        turn = 0
        granted = self._granted
        # The calls `turn_input` decides (empty: it resumes nothing).
        resumed: Sequence[PendingCall] = ()
        while True:
            self._view.route.append(agent)
            try:
                output, turn, handoff = await self._carried_turn(
                    agent, turn_input, chain, granted, turn
                )
            except ApplicationError as exc:
                session = turn_input.session
                if not resumed or session is None:
                    raise
                again = await self._asked_again(exc, session, resumed)
                if again is None:
                    raise
                # Refused before anything ran: the calls wait for decisions again.
                resumed = again
                turn_input = await self._resume(agent, session, again, turn_input, exc)
                turn += 1
                continue
            if handoff is not None:
                await self._follow(handoff, turn_input, agent=agent, turn=turn)
                return
            session = turn_input.session
            calls = pending_approvals(output) if output.exit_reason == AWAITING_APPROVAL else []
            if calls and session is not None:
                resumed = calls
                turn_input = await self._resume(agent, session, calls, turn_input)
                turn += 1
                continue
            resumed = ()
            if output.exit_reason != _AWAITING:
                return
            payload = await self._next_signal()
            if payload is None:
                return
            turn_input, turn = signal_input(turn_input, payload), turn + 1

    async def _asked_again(
        self, exc: ApplicationError, session: str, resumed: Sequence[PendingCall]
    ) -> Sequence[PendingCall] | None:
        """The calls a person is asked to decide again after a resume refused `resumed`'s decisions.

        None (the workflow fails with `exc`, as workflows started before do):
        the refusal cannot be mended by asking again.

        - The same calls, when the resume refused the decisions before anything
          ran for a reason the same calls can be decided again after (an edited
          input its tool rejects). The timeout's denials, having no inputs, are
          never refused so.
        - The calls the session waits on now (`neuron_turn.waiting_calls`), when
          ids no longer fit and a delegated agent held some: `decide` checked
          them against the listed calls, so the listing is stale. That agent
          went on by itself (decided through its own workflow) and waits on
          other calls now. Not when it waits on the same calls, or on none: asking
          again could not mend that.
        """
        if exc.type in _ASKED_AGAIN:
            return resumed if workflow.patched(_ASKS_AGAIN) else None
        if exc.type not in _STALE or all(call.agent is None for call in resumed):
            return None
        if not workflow.patched(_RELISTS):
            return None
        # Should the read fail, the refusal, which says more, fails the workflow.
        now = await self._calls_now(session)
        return None if not now or _ids(now) == _ids(resumed) else now

    async def _calls_now(self, session: str) -> list[PendingCall] | None:
        """The calls `session` waits on now, read by a worker (None: the read failed, logged)."""
        policy = self._policy
        try:
            now: list[PendingCall] = await workflow.execute_activity(
                WAITING_CALLS,
                session,
                result_type=list[PendingCall],
                start_to_close_timeout=_ms(policy.effect_timeout),
                retry_policy=_retry(policy),
            )
        except ActivityError as failed:
            if _cancelled(failed):
                raise
            workflow.logger.warning(
                "the calls session %r waits on now were not read: %s", session, failed
            )
            return None
        return now

    async def _resume(
        self,
        agent: AgentId,
        session: str,
        calls: Sequence[PendingCall],
        turn_input: TurnInput,
        refused: ApplicationError | None = None,
    ) -> TurnInput:
        """Wait for the decisions on `calls` (`refused`: why the last were); return the resume."""
        decisions = await self._decisions(agent, session, calls, refused)
        return resume_input(session, decisions, config=turn_input.config)

    async def _decisions(
        self,
        agent: AgentId,
        session: str,
        calls: Sequence[PendingCall],
        refused: ApplicationError | None = None,
    ) -> tuple[Decision, ...]:
        """Wait for the decisions on `calls`; deny them all when the approval timeout passes.

        `refused`: why the resume refused the decisions the last pause took for
        these calls; this one asks for them again, by that pause's deadline.

        Calls a delegated agent waits on (`PendingCall.agent`) are held by its own
        pause, which began during the turn and ends at its own timeout: this pause
        ends by then, timed from the turn's start, so that its decisions reach the
        agent before it denies them itself.
        """
        view, timeout = self._view, _ms(self._policy.approval_timeout)
        now = workflow.now()
        deadline = now + timeout
        if any(call.agent is not None for call in calls):
            deadline = self._turn_started + timeout
        if refused is not None and self._pause is not None:
            deadline = self._pause.waiting.deadline  # asked again: by the same deadline
        self._pauses += 1
        waiting = AwaitingApproval(
            workflow_id=view.workflow_id,
            agent=agent,
            session=session,
            pause=self._pauses,
            calls=tuple(calls),
            deadline=deadline,
            refused=None if refused is None else refused.message,
            refused_type=None if refused is None else refused.type,
            held_by=self._held_by,
        )
        assert view.output is not None
        snapshot = DispatchResult(
            workflow_id=view.workflow_id,
            agent=view.agent,
            output=view.output,
            route=tuple(view.route),
            delegations=tuple(view.delegations),
        )
        self._waiting, self._decided = waiting, None
        self._pause = Pause(waiting=waiting, result=snapshot)
        if workflow.patched(_RELISTS_AT_ONCE):
            if self._alone:
                await self._tell_holder()
            await self._until_decided(deadline)
        else:
            try:
                await workflow.wait_condition(
                    lambda: self._decided is not None, timeout=max(deadline - now, _NO_TIME)
                )
            except TimeoutError:
                pass  # a `decide` accepted in the same instant still counts
        return self._taken()

    def _taken(self) -> tuple[Decision, ...]:
        """The decisions the waiting pause took, or its calls denied; it waits no more."""
        decided, waiting = self._decided, self._waiting
        assert waiting is not None
        self._waiting, self._decided = None, None
        self._alone = decided is None or decided.key is None
        return timed_out(waiting) if decided is None else decided.decisions

    async def _until_decided(self, deadline: datetime) -> None:
        """Wait for the decisions until `deadline`, listing the calls anew when told to.

        A delegated agent this pause lists, decided on its own and paused again,
        says so (`RELIST_SIGNAL`): its calls are read again, and the pause lists
        them, by the same deadline. Decisions accepted meanwhile, against the
        calls as listed when they came, are kept (and refused by the resume
        should they no longer fit: see `_asked_again`).
        """
        while self._decided is None:
            try:
                await workflow.wait_condition(
                    lambda: self._decided is not None or self._relist,
                    timeout=max(deadline - workflow.now(), _NO_TIME),
                )
            except TimeoutError:
                return  # a `decide` accepted in the same instant still counts
            if self._decided is None:
                self._relist = False
                await self._relisted()

    async def _relisted(self) -> None:
        """List what the waiting pause's delegated agents wait on now, if that changed."""
        waiting, pause = self._waiting, self._pause
        if waiting is None or pause is None or all(c.agent is None for c in waiting.calls):
            return
        now = await self._calls_now(waiting.session)
        if self._decided is not None or not now or _ids(now) == _ids(waiting.calls):
            return
        self._pauses += 1
        update = {"pause": self._pauses, "calls": tuple(now), "refused": None, "refused_type": None}
        relisted = waiting.model_copy(update=update)
        self._waiting, self._pause = relisted, Pause(waiting=relisted, result=pause.result)
        await self._tell_holder()  # its own pause lists these calls too

    async def _tell_holder(self) -> None:
        """Tell the workflow whose pause lists this one's calls that they changed.

        Nothing to tell when no parent waits on this workflow as its delegated agent.
        """
        holder = self._held_by
        if holder is None:
            return
        try:
            await workflow.get_external_workflow_handle(holder).signal(RELIST_SIGNAL)
        except FailureError as exc:  # it ended: nothing lists the calls any more
            workflow.logger.info("workflow %s not told of the calls now: %s", holder, exc.message)

    async def _carried_turn(
        self,
        agent: AgentId,
        turn_input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None,
        turn: int,
    ) -> tuple[TurnOutput, int, tuple[HandoffEffect, Chain] | None]:
        """Run a turn and carry out its effects; while it fails part-way, continue it.

        Each part that failed after its tools ran is carried out like a finished turn
        (its history, its effects), then its continuation runs as the next turn
        number after the wait a retry would have had, within the attempts and total
        time the policy gives the turn; a part no retry follows is carried out, then
        the turn fails with its error. What a turn stopped by the workflow's
        cancellation hands back (its part, or its output if it finished all the
        same) is carried out too, then the cancellation goes on. Returns the last
        part's output and number, and its handoff.
        """
        tries = _Tries(self._policy, workflow.now())
        while True:
            result = await self._turn(agent, turn_input, chain, granted, turn, tries)
            output = result.output
            self._view.output = output
            try:
                handoff = await self._effects(
                    output.effects,
                    agent=agent,
                    turn=turn,
                    chain=chain,
                    delegated_for=delegating(turn_input.session, self._delegated_for),
                )
            except asyncio.CancelledError:
                # Cancelled among its effects: its memory went in all the same (`_effects`).
                if workflow.patched(_APPLIES_MEMORY_THROUGH_CANCELLATION):
                    self._keep(result)
                raise
            self._keep(result)
            interruption = result.interrupted
            if _cancel_requested():
                # The activity waited out its cancellation; what it handed back is kept.
                raise asyncio.CancelledError("the workflow was cancelled")
            if interruption is None:
                return output, turn, handoff
            wait = tries.next_wait(interruption)
            if wait is None:
                raise _failure(interruption, output, self._failed_in(agent, chain))
            await workflow.sleep(wait)
            turn_input, turn = interruption.continuation, turn + 1

    def _keep(self, result: TurnResult) -> None:
        """Keep `result`, carried out, as where a later dispatch goes on (if it is a part)."""
        interruption = result.interrupted
        self._kept = (
            None
            if interruption is None
            else KeptPart(output=result.output, continuation=interruption.continuation)
        )

    async def _turn(
        self,
        agent: AgentId,
        turn_input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None,
        turn: int,
        tries: _Tries,
    ) -> TurnResult:
        policy = self._policy
        # Workflows started before answered delegations were listed replay as they ran.
        answered = workflow.patched(_LISTS_ANSWERED)
        # And those started before interrupted turns were continued run them again whole.
        continues = answered and workflow.patched(_CONTINUES)
        # A cancelled turn's activity returns its part, when it has one, for the
        # workflow to carry out before it ends (those started before: nothing kept).
        cancellation = (
            workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
            if continues and workflow.patched(_KEEPS_CANCELLED)
            else workflow.ActivityCancellationType.TRY_CANCEL
        )
        self._turn_started, self._held = workflow.now(), ()
        request = TurnRequest(
            workflow_id=self._view.workflow_id,
            agent=agent,
            input=turn_input,
            route=chain.route(),
            granted=granted,
            progress=self._progress,
            chain=chain,
            policy=policy,
            turn=turn,
            answered=answered,
            continues=continues,
            delegated_for=self._delegated_for,
        )
        too_large = self._too_large(request, agent, "input")
        if too_large is not None:  # a signal's payload or decisions made it so
            raise too_large
        running: workflow.ActivityHandle[TurnOutput | TurnResult] = workflow.start_activity(
            EXECUTE_TURN,
            request,
            result_type=TurnResult if answered else TurnOutput,
            start_to_close_timeout=_ms(policy.start_to_close),
            schedule_to_close_timeout=tries.time_left(),
            heartbeat_timeout=_ms(policy.heartbeat),
            retry_policy=_retry(policy, tries.attempts_left()),
            cancellation_type=cancellation,
        )
        try:
            result = await _through_cancellation(running, cancellation)
        except ActivityError as exc:
            if _cancelled(exc):
                raise
            # A continuation failing for good hands on the part kept before it.
            kept = self._kept
            raise workflow_failure(
                exc,
                context=self._failed_in(agent, chain),
                kept=None if kept is None else (kept.output, kept.continuation),
            ) from None
        if isinstance(result, TurnOutput):
            return TurnResult(output=result)
        self._view.delegations.extend(result.delegations)
        self._held = tuple(d.workflow_id for d in result.delegations if d.held)
        return result

    def _failed_in(self, agent: AgentId, chain: Chain) -> str:
        """Where a turn of `agent` failed, as the dispatch's error names it."""
        return (
            f"agent {agent!r} failed in workflow {self._view.workflow_id} (route: {chain.route()})"
        )

    async def _effects(
        self,
        effects: Sequence[Effect],
        *,
        agent: AgentId,
        turn: int,
        chain: Chain,
        delegated_for: SessionId | None,
    ) -> tuple[HandoffEffect, Chain] | None:
        """Carry out `effects` in order (see the module doc); return the handoff, if any.

        `delegated_for`: the session its delegations are delegated for (`WorkflowInput`).
        """
        try:
            # Depth and cycles, for every delegation and handoff, before any effect runs.
            chains = chain.follow(effects)
        except DispatchFailed as exc:
            raise ApplicationError(str(exc), type="DispatchFailed", non_retryable=True) from None
        handoff: tuple[HandoffEffect, Chain] | None = None
        group: list[tuple[int, DelegateEffect]] = []
        memory_reached = False
        try:
            for index, effect in enumerate(effects):
                if isinstance(effect, DelegateEffect):
                    group.append((index, effect))
                    continue
                await self._delegate(group, chains, turn=turn, delegated_for=delegated_for)
                group = []
                if _is_memory(effect):
                    if not memory_reached:
                        memory_reached = True
                        await self._memory(effects, agent=agent, turn=turn)
                elif isinstance(effect, HandoffEffect):
                    handoff = (effect, chains[index])
                else:
                    await self._other(effect, agent=agent)
            await self._delegate(group, chains, turn=turn, delegated_for=delegated_for)
        except BaseException:
            # The turn happened: what it did stays in its session, whatever an effect
            # before its memory did (failed, was cancelled), as neuron-orch-local does.
            unapplied = not memory_reached and any(_is_memory(e) for e in effects)
            if unapplied and workflow.patched(_APPLIES_MEMORY_ON_FAILURE):
                await self._memory(effects, agent=agent, turn=turn)
            raise
        return handoff

    async def _memory(self, effects: Sequence[Effect], *, agent: AgentId, turn: int) -> None:
        memory = tuple(
            IndexedMemoryEffect(index=index, effect=effect)
            for index, effect in enumerate(effects)
            if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect | CustomEffect)
            and _is_memory(effect)
        )
        request = MemoryRequest(
            workflow_id=self._view.workflow_id,
            run_id=workflow.info().run_id,
            turn=turn,
            agent=agent,
            effects=memory,
        )
        try:
            if not workflow.patched(_APPLIES_MEMORY_THROUGH_CANCELLATION):
                await self._effect_activity(APPLY_MEMORY, request)
                return
            # Not cancelled with the workflow: an activity waiting for its retry would
            # be dropped, and with it what the turn did.
            applying = asyncio.ensure_future(self._effect_activity(APPLY_MEMORY, request))
            try:
                await asyncio.shield(applying)
            except asyncio.CancelledError:
                await applying
                raise
        except ActivityError as exc:
            if _cancelled(exc):
                raise
            # Refused for good (its retries spent): the turn ran, so its effects go with
            # the failure, its exchange among them, for the caller to write later.
            output = self._view.output  # the turn's, set before its effects are carried out
            assert output is not None
            raise memory_not_applied(exc, output) from None

    async def _delegate(
        self,
        group: Sequence[tuple[int, DelegateEffect]],
        chains: dict[int, Chain],
        *,
        turn: int,
        delegated_for: SessionId | None,
    ) -> None:
        """Run a run of consecutive delegations concurrently; record them in effect order.

        At most `max_concurrent_delegations` at once: past Temporal's limit of pending
        children the workflow's task is refused for ever. Runs within it start all at
        once, as workflows from before did (they replay so).
        """
        if not group:
            return
        ids = [f"{self._view.workflow_id}/t{turn}/d{index}-{e.agent}" for index, e in group]
        starts = [
            (child_id, effect.agent, effect.input, chains[index], delegated_for)
            for child_id, (index, effect) in zip(ids, group, strict=True)
        ]
        size = self._policy.max_concurrent_delegations
        if len(starts) <= size or not workflow.patched(_BOUNDS_FAN_OUT):
            size = len(starts)
        results: list[DispatchResult] = []
        for first in range(0, len(starts), size):
            batch = starts[first : first + size]
            results.extend(await asyncio.gather(*(self._child(*start) for start in batch)))
        for child_id, (_, effect), result in zip(ids, group, results, strict=True):
            self._view.delegations.append(
                Delegation(agent=effect.agent, workflow_id=child_id, output=result.output)
            )

    async def _child(
        self,
        child_id: str,
        agent: AgentId,
        child_input: TurnInput,
        chain: Chain,
        delegated_for: SessionId | None,
    ) -> DispatchResult:
        params = WorkflowInput(
            agent=agent,
            input=child_input,
            chain=chain,
            policy=self._policy,
            parent=self._view.workflow_id,
            delegated_for=delegated_for,
            payload_limit=self._payload_limit,
        )
        too_large = self._too_large(params, agent, "input")
        if too_large is not None:
            raise too_large
        return await workflow.execute_child_workflow(AgentWorkflow.run, params, id=child_id)

    async def _follow(
        self,
        handoff: tuple[HandoffEffect, Chain],
        turn_input: TurnInput,
        *,
        agent: AgentId,
        turn: int,
    ) -> None:
        """Run the handoff's agent in a child workflow and take its result as this one's."""
        effect, chain = handoff
        params = WorkflowInput(
            agent=effect.agent,
            input=handoff_input(turn_input, source=agent, state=effect.state),
            chain=chain,
            policy=self._policy,
            parent=self._view.workflow_id,
            # The handoff goes on with this workflow's task: delegated for the same session.
            delegated_for=self._delegated_for,
            payload_limit=self._payload_limit,
        )
        too_large = self._too_large(params, effect.agent, "input")
        if too_large is not None:  # its state beside the conversation made it so
            raise too_large
        child_id = f"{self._view.workflow_id}/t{turn}/h-{effect.agent}"
        self._handoff = await workflow.start_child_workflow(AgentWorkflow.run, params, id=child_id)
        try:
            await self._forward()  # signals that came before the handoff started
            result = await self._handoff
        finally:
            self._handoff = None
        view = self._view
        view.agent, view.output = result.agent, result.output
        view.route.extend(result.route)
        view.delegations.extend(result.delegations)

    async def _other(self, effect: Effect, *, agent: AgentId) -> None:
        if isinstance(effect, SignalEffect):
            await self._signal(effect, agent=agent)
        elif isinstance(effect, LogEffect):
            emit_log(
                effect, agent=agent, workflow_id=self._view.workflow_id, logger=workflow.logger
            )
        elif isinstance(effect, CustomEffect):
            request = CustomRequest(workflow_id=self._view.workflow_id, agent=agent, effect=effect)
            await self._effect_activity(CUSTOM_EFFECT, request)

    async def _signal(self, effect: SignalEffect, *, agent: AgentId) -> None:
        handle = workflow.get_external_workflow_handle(effect.target)
        try:
            await handle.signal(INBOX_SIGNAL, effect.payload)
        except FailureError as exc:
            raise ApplicationError(
                f"agent {agent!r} (workflow {self._view.workflow_id}) could not signal "
                f"workflow {effect.target!r}: {exc.message}",
                type="SignalFailed",
                non_retryable=True,
            ) from None

    async def _effect_activity(self, name: str, request: MemoryRequest | CustomRequest) -> None:
        policy = self._policy
        await workflow.execute_activity(
            name,
            request,
            start_to_close_timeout=_ms(policy.effect_timeout),
            retry_policy=_retry(policy),
        )

    async def _forward(self) -> None:
        """Pass the signals no turn has taken on to the running handoff, in order."""
        async with self._forwarding:
            while self._handoff is not None and self._consumed < len(self._view.inbox):
                payload = self._view.inbox[self._consumed]
                self._consumed += 1
                await self._handoff.signal(INBOX_SIGNAL, payload)

    async def _next_signal(self) -> SignalPayload | None:
        """Wait for a signal not yet consumed by a turn; None when the wait times out."""
        view = self._view
        try:
            await workflow.wait_condition(
                lambda: self._consumed < len(view.inbox), timeout=_ms(self._policy.signal_timeout)
            )
        except TimeoutError:
            return None
        self._consumed += 1
        return view.inbox[self._consumed - 1]


async def _through_cancellation(
    running: workflow.ActivityHandle[TurnOutput | TurnResult],
    cancellation: workflow.ActivityCancellationType,
) -> TurnOutput | TurnResult:
    """The turn activity's result, which the workflow's cancellation does not drop.

    Awaited plainly, a result that reaches the workflow in the same task as its
    cancellation (its worker stopped after the activity returned the turn's
    part, and the next worker brings both) is dropped by the SDK in favour of
    the cancellation, and the tools that ran with it. Shielded, the result is
    taken; an activity still running is cancelled as before, and hands back
    its part (`WAIT_CANCELLATION_COMPLETED`). Workflows from before the patch,
    and those whose activities are not waited for, replay as they ran.
    """
    waits = cancellation == workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
    if not waits or not workflow.patched(_KEEPS_RACED):
        return await running
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()  # as the SDK does: the workflow goes on to carry out the part
        if not running.done():
            running.cancel()
        return await running


def _cancelled(exc: BaseException) -> bool:
    """Whether `exc` is this workflow's cancellation reaching it through an activity or child.

    Workflows started before cancelled turns were kept fail with it, as they did.
    """
    return is_cancelled_exception(exc) and _cancel_requested()


def _cancel_requested() -> bool:
    """Whether this workflow was cancelled (one started before cancelled turns were kept: no).

    A turn's activity waited for its cancellation to end (handing back its part),
    so the workflow goes on from there: it checks after the turn, rather than being
    interrupted in it.
    """
    return workflow.cancellation_reason() is not None and workflow.patched(_KEEPS_CANCELLED)


def _ids(calls: Sequence[PendingCall]) -> set[str]:
    return {call.id for call in calls}


def _is_memory(effect: Effect) -> bool:
    return isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect) or (
        isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY
    )


def _ms(value: int) -> timedelta:
    return timedelta(milliseconds=value)


def _retry(policy: TurnPolicy, attempts: int | None = None) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=_ms(policy.initial_interval),
        backoff_coefficient=float(policy.backoff),
        maximum_interval=_ms(policy.max_interval),
        maximum_attempts=policy.max_attempts if attempts is None else attempts,
    )


@dataclass(slots=True)
class _Tries:
    """The attempts and the total time a turn's parts share (`TurnPolicy`), on workflow time."""

    policy: TurnPolicy
    started: datetime
    used: int = 0
    """Attempts the parts carried out so far took."""

    def attempts_left(self) -> int:
        """The next part's attempts: what the earlier parts left of `max_attempts`."""
        return self.policy.max_attempts - self.used

    def time_left(self) -> timedelta | None:
        """The next part's schedule-to-close timeout: what is left of `max_total`."""
        total = self.policy.max_total
        return None if total is None else _ms(total) - (workflow.now() - self.started)

    def next_wait(self, interruption: Interruption) -> timedelta | None:
        """Count the interrupted part's attempts; return the wait before its continuation.

        The wait is the provider's `retry_after` if it gave one, else the policy's
        backoff, as Temporal's own retry would wait. None where Temporal would start
        no other attempt: the error is not retried, the attempts are spent, or the
        wait would end past `max_total`.
        """
        self.used += interruption.attempts
        if interruption.last or self.used >= self.policy.max_attempts:
            return None
        if interruption.retry_after_ms is not None:
            # Bounded where the activity sets it; held here too for a worker that did not.
            wait = _ms(min(max(interruption.retry_after_ms, 0), MAX_RETRY_AFTER_MS))
        else:
            seconds = self.policy.wait(self.used, None, 0.0)
            assert seconds is not None  # only a retry_after can be refused
            wait = timedelta(seconds=seconds)
        left = self.time_left()
        return None if left is not None and wait >= left else wait


def _failure(interruption: Interruption, kept: TurnOutput, context: str) -> ApplicationError:
    """The failure of a turn whose kept part no continuation follows: the part's error.

    It carries the part and its continuation, for the caller to dispatch later.
    """
    info = FailureInfo(
        context=context,
        retry_after_ms=interruption.retry_after_ms,
        kept=kept,
        continuation=interruption.continuation,
    )
    return ApplicationError(interruption.message, info, type=interruption.error, non_retryable=True)
