"""`TemporalOrchestrator`: a `layer0.Orchestrator` whose dispatches are Temporal workflows."""

from __future__ import annotations

import asyncio
import math
import uuid
from asyncio import FIRST_COMPLETED
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, TypeVar

from pydantic import JsonValue
from temporalio.api.enums.v1 import PendingWorkflowTaskState
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.converter import ExternalStorage
from temporalio.exceptions import (
    ApplicationError,
    TerminatedError,
    WorkflowAlreadyStartedError,
    is_cancelled_exception,
)
from temporalio.service import RPCError, RPCStatusCode

from layer0 import (
    AgentId,
    DispatchFailed,
    OrchError,
    PartialTurn,
    QueryPayload,
    SessionId,
    SignalFailed,
    SignalPayload,
    TurnInput,
    WorkflowId,
    WorkflowNotFound,
)
from neuron_orch_local import QUERY_TYPES, AgentEvent, Chain, Dispatcher, UnknownQueryError
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    EventStream,
    NotAwaitingApprovalError,
    event_from_json,
    split_decisions,
)

from ._failures import orch_error
from ._payload_limit import payload_limit
from .approvals import AwaitingApproval, DecideRequest, Pause, Settled, approval_error, refusal
from .connect import connect
from .errors import (
    CancellationPendingError,
    DecisionsPendingError,
    NoWorkerError,
    PayloadTooLargeError,
    QueryUnansweredError,
)
from .messages import DispatchResult, KeptPart, WorkflowInput
from .names import (
    APPROVALS_QUERY,
    DECIDE_UPDATE,
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    INBOX_SIGNAL,
    KEPT_QUERY,
    PROGRESS_QUERY,
    SETTLED_UPDATE,
    WORKFLOW_TYPE,
)
from .policy import TurnPolicy

__all__ = ["TemporalOrchestrator"]

_T = TypeVar("_T")

# A workflow no worker has touched holds two events: started, task scheduled.
_UNTOUCHED_HISTORY: Final = 2
_CANCELLED_UNSTARTED: Final = "cancelled before any worker picked it up"
"""The reason a workflow cancelled before any worker started it is terminated with."""

_Cancelled = Literal["ended", "cancelled", "unstarted"]
"""What `cancel` found: a workflow that had ended, one it cancelled and waited for,
or one no worker had started (terminated: nothing of it ran)."""
_RESULT: Final = DispatchResult
_EXIT_GRACE: Final = 0.5
DEFAULT_POLL_INTERVAL: Final = 0.2
"""Seconds between two polls of a streamed dispatch's progress."""
_QUERY_TIMEOUT: Final = 2.0
# A worker replays an ended workflow to answer a query about it.
_KEPT_QUERY_TIMEOUT: Final = timedelta(seconds=10)
_MAX_RPC_WAIT: Final = 24 * 60 * 60.0
"""The longest a query waits for a worker, in seconds, whatever `pickup_timeout` says."""


class TemporalOrchestrator(Dispatcher[DispatchResult]):
    """A `layer0.Orchestrator` on Temporal: each dispatch is a workflow run by a worker.

    The caller's code is the same as with neuron-orch-local's
    `LocalOrchestrator`; the agents and the store live on the workers
    (`neuron_orch_temporal.create_worker` / `run_worker`), which may be
    other processes on other machines. A dispatch survives worker crashes:
    a turn cut short runs again on another worker, and effects already
    carried out are not repeated.

    `dispatch(..., workflow_id=...)` names the workflow: dispatching again
    with the id of a running or completed workflow waits for that workflow's
    result instead of running anything again; the id of a failed one runs
    it anew.

    A turn that pauses for approval (`neuron_turn.ApprovalPolicy`) returns
    its paused output to the caller, as with `LocalOrchestrator`, while its
    workflow waits durably for `decide` (see `neuron_orch_temporal.approvals`).
    Dispatching `neuron_turn.resume_input(session, decisions)` to the agent
    whose workflow waits on that session decides it too.
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        address: str = DEFAULT_ADDRESS,
        namespace: str = DEFAULT_NAMESPACE,
        task_queue: str = DEFAULT_TASK_QUEUE,
        policy: TurnPolicy | None = None,
        max_concurrency: int = 100,
        pickup_timeout: float | None = 30.0,
        stop_with_caller: bool = False,
        storage: ExternalStorage | None = None,
    ) -> None:
        """Dispatch on `client`, or connect to `address` on first use.

        Args:
            client: a client made by `connect` (or with its `DATA_CONVERTER`).
            address: the Temporal frontend, `HOST:PORT`, when no client is given.
            namespace: the namespace to connect to, when no client is given.
            task_queue: the queue the workers poll.
            policy: timeouts and retries of turns and effects.
            max_concurrency: how many dispatches of one `dispatch_many` call run at once.
            pickup_timeout: seconds to wait for a worker to start a dispatch
                before failing with `NoWorkerError`; None waits forever.
            stop_with_caller: a dispatch whose caller is cancelled (its task
                cancelled, Ctrl-C) cancels its workflow and waits for it to end,
                so its turn stops with what its tools did kept, as with
                `LocalOrchestrator`; the caller's cancellation then carries
                that part and its continuation (`layer0.partial_of`). By
                default the workflow runs on, durable, and `result(workflow_id)`
                finds it.
            storage: where large payloads are kept out of workflow histories,
                when no client is given (see `connect`; a given client carries
                its own); give the workers the same.

        Raises:
            ValueError: `pickup_timeout` is not positive, or `storage` comes with a
                `client` (whose converter, made by `connect`, already decides it).
        """
        super().__init__(max_concurrency=max_concurrency)
        if pickup_timeout is not None and not (0 < pickup_timeout < math.inf):
            raise ValueError(
                f"pickup_timeout must be a positive finite number of seconds, or None to "
                f"wait for ever, not {pickup_timeout}"
            )
        if client is not None and storage is not None:
            raise ValueError(
                "storage is for the client TemporalOrchestrator connects itself; a given"
                " client keeps large payloads where its own converter says: make it with"
                " connect(address, storage=...)"
            )
        self._client = client
        self._address = address
        self._namespace = namespace
        self._task_queue = task_queue
        self._policy = policy if policy is not None else TurnPolicy()
        self._pickup_timeout = pickup_timeout
        self._stop_with_caller = stop_with_caller
        self._storage = storage
        self._connecting = asyncio.Lock()
        # The workflow each session's last pause seen here waits in (a shortcut past listing).
        self._paused: dict[str, WorkflowId] = {}

    def __repr__(self) -> str:
        where = (
            self._address
            if self._client is None
            else self._client.service_client.config.target_host
        )
        return f"TemporalOrchestrator(address={where!r}, task_queue={self._task_queue!r})"

    async def __aenter__(self) -> TemporalOrchestrator:
        """Connect now, so an unreachable server fails here rather than on first use."""
        await self.client()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close (see `close`)."""
        await self.close()

    async def close(self) -> None:
        """Let the client's threads settle before the process may exit.

        temporalio/sdk-python#300: a process exiting right after using a
        client aborts about half the time (exit code 134); a short pause
        avoids it. Call it last thing in a command-line entry point.
        """
        if self._client is not None:
            await asyncio.sleep(_EXIT_GRACE)

    @property
    def task_queue(self) -> str:
        """The task queue dispatches go to."""
        return self._task_queue

    async def client(self) -> Client:
        """Return the Temporal client, connecting on first use.

        Raises:
            ServerUnavailableError: nothing answers at the address.
        """
        async with self._connecting:
            if self._client is None:
                self._client = await connect(
                    self._address, namespace=self._namespace, storage=self._storage
                )
            return self._client

    async def run(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> DispatchResult:
        """Like `dispatch`, but return the workflow id, route and delegations too.

        Raises:
            AgentNotFound: the workers host no agent `agent`, or an effect names one.
            WorkflowNotFound: a signal effect names a workflow that does not exist.
            DispatchFailed: a turn failed for good (its layer0 error chained as
                `__cause__`), an effect failed, a limit was hit, or `workflow_id`
                names a workflow of another agent.
            NoWorkerError: no worker started the workflow within `pickup_timeout`.
            ServerUnavailableError: the Temporal server cannot be reached.

        An `input` carrying decisions (`resume_input`) for a session on which
        a workflow of `agent` waits for approval is sent to that workflow
        (`decide`; its errors then) instead of starting one. That workflow is
        found among the pauses this orchestrator returned, else by listing
        (`approvals`); with none waiting, a new workflow resumes the session
        from its history.
        """
        if workflow_id is None:
            routed = await self._route_decisions(agent, input)
            if routed is not None:
                return routed
        result = await self._result(await self._start(agent, input, workflow_id))
        self._note_pause(input.session, result)
        return result

    def _note_pause(self, session: SessionId | None, result: DispatchResult) -> None:
        """Remember the workflow of a paused `result`, so decisions on `session` find it."""
        if result.output.exit_reason == AWAITING_APPROVAL and session is not None:
            self._paused[session] = result.workflow_id

    async def _route_decisions(self, agent: AgentId, input: TurnInput) -> DispatchResult | None:
        """Decide the workflow waiting on `input`'s session, if `input` resumes one."""
        session = input.session
        decisions, _ = split_decisions(input.metadata)
        if session is None or decisions is None:
            return None
        waiting = await self._waiting_on(session, agent)
        if waiting is None:
            return None
        result = await self.decide(waiting.workflow_id, decisions, pause=waiting.pause)
        self._note_pause(session, result)
        return result

    async def _waiting_on(self, session: str, agent: AgentId) -> AwaitingApproval | None:
        known = self._paused.pop(session, None)
        try:
            found = [] if known is None else await self.awaiting(known)
        except WorkflowNotFound:
            found = []  # gone past its retention: list instead
        if not found:
            found = await self.approvals(session=session)
        mine = [w for w in found if w.session == session and w.agent == agent]
        if len(mine) > 1:
            ids = ", ".join(w.workflow_id for w in mine)
            raise DispatchFailed(
                f"several workflows of agent {agent!r} wait on session {session!r} ({ids}); "
                "decide one with TemporalOrchestrator.decide"
            )
        return mine[0] if mine else None

    def stream(
        self,
        agent: AgentId,
        input: TurnInput,
        *,
        workflow_id: WorkflowId | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> EventStream[AgentEvent, DispatchResult]:
        """Like `run`, yielding the turn's progress events as the worker reports them.

        The worker's activity signals one event per model call and tool call
        of the dispatched agent's turns (`ModelCallStart`, `ModelCallDone`,
        `ToolStart`, `ToolResult`, `HookHalted`, `LimitReached`; text deltas
        are not sent through Temporal, whose history would keep each one);
        this polls the workflow's `progress` query every `poll_interval`
        seconds and yields the new ones in order, as neuron-orch-local's
        `AgentEvent`s. `result` holds the `DispatchResult` once the stream is
        read to its end; the output is the one `run` returns. Errors are
        those of `run`.
        """

        async def runner(sink: Callable[[AgentEvent], None]) -> DispatchResult:
            routed = None if workflow_id is not None else await self._route_decisions(agent, input)
            if routed is not None:
                return routed  # decided in a waiting workflow: no progress reported
            handle = await self._start(agent, input, workflow_id, progress=True)
            waiting = asyncio.ensure_future(self._result(handle, stops=False))
            seen = 0
            try:
                while not waiting.done():
                    await asyncio.wait({waiting}, timeout=poll_interval)
                    seen += await self._pass_progress(handle.id, agent, seen, sink)
                result = await waiting
                await self._pass_progress(handle.id, agent, seen, sink)
                self._note_pause(input.session, result)
            except asyncio.CancelledError as cancelled:
                # Stopped here, on the runner's own cancellation, which the stream hands
                # on (`partial`); the result wait would only ask for the kept part again.
                waiting.cancel()
                await self._stop(handle, cancelled)
                raise
            finally:
                waiting.cancel()
                await asyncio.gather(waiting, return_exceptions=True)
            return result

        return EventStream(runner)

    async def progress(self, workflow_id: WorkflowId, *, after: int = 0) -> list[JsonValue]:
        """Return the progress events workflow `workflow_id` holds, from index `after` on.

        Only dispatches started by `stream` collect any.

        Raises:
            WorkflowNotFound: no workflow `workflow_id`.
            QueryUnansweredError: no worker answered within `pickup_timeout`.
        """
        handle = (await self.client()).get_workflow_handle(workflow_id)
        events: list[JsonValue] = await self._query(handle, PROGRESS_QUERY, after)
        return events

    async def _pass_progress(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        after: int,
        sink: Callable[[AgentEvent], None],
    ) -> int:
        try:
            # A query waits for a worker to answer it: bounded, so a dispatch no
            # worker picks up still ends with the pickup timeout's error.
            async with asyncio.timeout(_QUERY_TIMEOUT):
                events = await self.progress(workflow_id, after=after)
        except (OrchError, WorkflowQueryFailedError, TimeoutError):
            return 0  # not started yet, or no worker to answer: the next poll may do better
        for event in events:
            try:
                rebuilt = event_from_json(event) if isinstance(event, dict) else None
            except ValueError:
                rebuilt = None  # from a newer worker: skip what this caller cannot read
            if rebuilt is not None:
                sink(AgentEvent(workflow_id, agent, rebuilt))
        return len(events)

    async def start(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> WorkflowId:
        """Start a dispatch without waiting for it; return its workflow id (see `run`).

        Starting with the id of a running or completed workflow of the same
        agent starts nothing and returns the id.
        """
        return (await self._start(agent, input, workflow_id)).id

    async def result(self, workflow_id: WorkflowId) -> DispatchResult:
        """Wait for the workflow `workflow_id` to finish and return its result (see `run`).

        Unlike `run`, this waits through pauses for approval, to the end.
        """
        client = await self.client()
        handle = client.get_workflow_handle(workflow_id, result_type=_RESULT)
        return await self._result(handle, after=None)

    async def _start(
        self,
        agent: AgentId,
        input: TurnInput,
        workflow_id: WorkflowId | None,
        *,
        progress: bool = False,
    ) -> WorkflowHandle[Any, DispatchResult]:
        client = await self.client()
        workflow_id = workflow_id if workflow_id is not None else f"{agent}-{uuid.uuid4()}"
        chain = Chain.root(agent, max_depth=self._policy.max_depth)
        granted = None if input.config is None else input.config.effect_policy
        params = WorkflowInput(
            agent=agent,
            input=input,
            chain=chain,
            policy=self._policy,
            granted=granted,
            progress=progress,
            payload_limit=payload_limit(client),
        )
        try:
            # The handle start_workflow returns, not a fresh one: the test
            # environment's time skipping hooks into it.
            return await client.start_workflow(
                WORKFLOW_TYPE,
                params,
                id=workflow_id,
                task_queue=self._task_queue,
                result_type=_RESULT,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                memo={"agent": agent},
                request_eager_start=True,
            )
        except WorkflowAlreadyStartedError:
            await self._check_agent(client, workflow_id, agent)
        except RPCError as exc:
            if _too_large(exc):
                raise PayloadTooLargeError(agent, None, None, part="input") from exc
            raise DispatchFailed(f"starting workflow {workflow_id!r} failed: {exc}") from exc
        return client.get_workflow_handle(workflow_id, result_type=_RESULT)

    async def _result(
        self,
        handle: WorkflowHandle[Any, DispatchResult],
        *,
        after: int | None = 0,
        stops: bool = True,
        refusals: bool = False,
    ) -> DispatchResult:
        """Wait for the workflow's end, or for a pause for approval after the `after`th.

        `after=None` waits for the end only. `stops`: cancelled, it stops the
        workflow first, if asked to (`_stop`); False when its caller does that.
        `refusals`: a pause asking again for decisions its resume refused raises
        that refusal.
        """
        # One result wait, never cancelled by the pickup check: cancelling a result
        # wait leaves the test server's time skipping locked for good.
        waiting = asyncio.ensure_future(handle.result())
        watching = asyncio.ensure_future(_watch(handle, after))
        try:
            pause = await self._first(handle, waiting, watching)
            if pause is not None:
                refused = refusal(pause.waiting) if refusals else None
                if refused is not None:
                    raise refused
                return pause.result
            return await waiting
        except asyncio.CancelledError as cancelled:
            if stops:
                await self._stop(handle, cancelled)
            raise
        except WorkflowFailureError as exc:
            if isinstance(exc.cause, TerminatedError) and exc.cause.message == _CANCELLED_UNSTARTED:
                raise DispatchFailed(f"workflow {handle.id} was {_CANCELLED_UNSTARTED}") from exc
            if is_cancelled_exception(exc.cause):
                # Its turn's part, if the turn got that far, is carried out (see `workflow`).
                cancellation = asyncio.CancelledError(f"workflow {handle.id} was cancelled")
                cancellation.__cause__ = exc
                await self._hand_on_kept_part(handle, cancellation)
                # As neuron-orch-local's: the cancellation, carrying the part, is the cause.
                raise DispatchFailed(f"workflow {handle.id} was cancelled") from cancellation
            # Keep the cause `orch_error` chained (the rebuilt layer0 error).
            error = orch_error(exc.cause)
            raise error from error.__cause__
        except RPCError as exc:
            raise _rpc_error(exc, handle.id) from exc
        finally:
            watching.cancel()
            # Returning at a pause stops the result wait; on the time-skipping test
            # server that is safe only with auto time skipping disabled (see above).
            waiting.cancel()

    async def _stop(
        self, handle: WorkflowHandle[Any, DispatchResult], cancelled: asyncio.CancelledError
    ) -> None:
        """With `stop_with_caller`, cancel the workflow whose caller is cancelled; wait for its end.

        Shielded from the cancellation under way, so the turn's part is kept
        before the caller goes on, and handed on `cancelled`
        (`layer0.partial_of`); a cancel that fails is noted on `cancelled`.
        """
        if not self._stop_with_caller:
            return
        try:
            stopped = await asyncio.shield(self._cancel(handle.id))
        except OrchError as exc:
            cancelled.add_note(f"workflow {handle.id} was not seen to stop: {exc}")
            return
        if stopped == "cancelled":
            await asyncio.shield(self._hand_on_kept_part(handle, cancelled))

    async def _hand_on_kept_part(
        self, handle: WorkflowHandle[Any, DispatchResult], cancelled: asyncio.CancelledError
    ) -> None:
        """Set on `cancelled` what the cancelled workflow's turn kept (`layer0.partial_of`).

        So its caller can go on from there, as with `LocalOrchestrator`. The
        workflow has ended, so a worker replays it to answer; one that cannot
        (none answers in time, or an older worker without the query) is noted
        on `cancelled` and nothing is handed on.
        """
        try:
            kept: KeptPart | None = await self._query(
                handle, KEPT_QUERY, result_type=KeptPart, timeout=_KEPT_QUERY_TIMEOUT
            )
        except OrchError as exc:
            cancelled.add_note(f"what workflow {handle.id}'s turn kept is unknown: {exc}")
            return
        if kept is not None:
            cancelled.partial = PartialTurn(kept.output, kept.continuation)  # type: ignore[attr-defined]

    async def _first(
        self,
        handle: WorkflowHandle[Any, DispatchResult],
        waiting: asyncio.Future[DispatchResult],
        watching: asyncio.Future[Settled | None],
    ) -> Pause | None:
        """Return the pause if one comes before the end; None at the end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self._pickup_timeout or 0.0)
        checked = self._pickup_timeout is None
        pending: set[asyncio.Future[Any]] = {waiting, watching}
        while True:
            left = None if checked else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(pending, timeout=left, return_when=FIRST_COMPLETED)
            if not done:
                await self._check_picked_up(handle, waiting)
                checked = True
                continue
            if watching in done:
                pending.discard(watching)
                settled = watching.result()
                if settled is not None and settled.pause is not None:
                    return settled.pause
            if waiting in done:
                return None

    async def decide(
        self, workflow_id: WorkflowId, decisions: Sequence[Decision], *, pause: int | None = None
    ) -> DispatchResult:
        """Send a person's decisions to workflow `workflow_id`, paused for approval.

        The workflow checks them before taking them: every pending call
        decided once, nothing else. Then its turn resumes (once: a second
        `decide` for the same pause is refused) and this returns as `run`
        does: at the end, or at the next pause.

        Args:
            workflow_id: the paused workflow (`DispatchResult.workflow_id`, `approvals`).
            decisions: one `Decision` per pending call.
            pause: the pause these decide (`AwaitingApproval.pause`); when given,
                decisions meant for an earlier pause are refused.

        Raises:
            MissingDecisionError: a pending call has no decision.
            UnknownDecisionError: a decision names a call that is not pending.
            DuplicateDecisionError: a call is decided twice.
            NotAwaitingApprovalError: the workflow waits on no approval (or on
                another pause than `pause`), or it has finished.
            ApprovalError: the resume refused them before anything ran (an
                edited input the tool rejects, a delegated agent's among them:
                `InvalidEditedInputError`): the calls wait for decisions again,
                `AwaitingApproval.refused` saying why.
            WorkflowNotFound: no workflow `workflow_id`.
            DecisionsPendingError: no worker took the decisions within
                `pickup_timeout` (its worker died, say); the next one takes them
                and resumes the turn (`result` waits for its end).
            DispatchFailed: the resumed turn failed (as in `run`).
        """
        client = await self.client()
        handle = client.get_workflow_handle(workflow_id, result_type=_RESULT)
        request = DecideRequest(decisions=tuple(decisions), pause=pause)
        updating = asyncio.ensure_future(
            handle.execute_update(DECIDE_UPDATE, request, result_type=int)
        )
        try:
            decided = await self._taken(client, workflow_id, updating, DecisionsPendingError)
        except asyncio.CancelledError as cancelled:
            cancelled.add_note(_may_be_applied(workflow_id))
            raise
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            refused = approval_error(cause) if isinstance(cause, ApplicationError) else None
            if refused is not None:
                raise refused from None
            raise DispatchFailed(
                f"workflow {workflow_id!r} did not take the decisions: {cause}"
            ) from exc
        except WorkflowUpdateRPCTimeoutOrCancelledError as exc:
            raise _unconfirmed(workflow_id) from exc
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise _rpc_error(exc, workflow_id) from exc
            await self._describe(client, workflow_id)
            raise NotAwaitingApprovalError(
                f"workflow {workflow_id!r} has finished; it awaits no approval"
            ) from exc
        return await self._result(handle, after=decided, refusals=True)

    async def awaiting(self, workflow_id: WorkflowId) -> list[AwaitingApproval]:
        """Return what workflow `workflow_id` waits on for approval (empty: nothing).

        Raises:
            WorkflowNotFound: no workflow `workflow_id`.
            QueryUnansweredError: no worker answered within `pickup_timeout`.
        """
        handle = (await self.client()).get_workflow_handle(workflow_id)
        waiting: list[AwaitingApproval] = await self._query(
            handle, APPROVALS_QUERY, result_type=list[AwaitingApproval]
        )
        return waiting

    async def approvals(self, *, session: str | None = None) -> list[AwaitingApproval]:
        """Return every workflow of this task queue waiting for approval (of `session`'s only).

        Lists the running workflows through Temporal's visibility API (the
        dev server and clusters have it; the time-skipping test server does
        not) and asks each what it waits on; oldest first.

        Raises:
            DispatchFailed: the server cannot list workflows.
        """
        client = await self.client()
        listing = (
            f"WorkflowType = '{WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' "
            f"AND TaskQueue = '{self._task_queue}'"
        )
        found: list[AwaitingApproval] = []
        try:
            async for execution in client.list_workflows(listing):
                found.extend(await self.awaiting(execution.id))
        except RPCError as exc:
            raise DispatchFailed(
                f"listing the workflows waiting for approval failed: {exc}"
            ) from exc
        mine = [w for w in found if session is None or w.session == session]
        return sorted(mine, key=lambda w: w.deadline)

    async def cancel(self, workflow_id: WorkflowId) -> bool:
        """Cancel the running workflow `workflow_id`, wait for its end; say whether it ran.

        Its turn stops where it is (the worker hears of it at the turn's next
        heartbeat): what its tools did is kept in the session, the delegations
        it waits on are cancelled with it, and its dispatch raises
        `DispatchFailed` saying it was cancelled, the cancellation its cause,
        carrying that part and its continuation (`layer0.partial_of`), as
        with `LocalOrchestrator`. One no worker has started yet is terminated
        at once (nothing of it ran; waiting for it would wait for a worker),
        and its dispatch raises `DispatchFailed` saying it was cancelled before
        any worker picked it up. A workflow that has already ended is left as
        it is, and False returned.

        Raises:
            WorkflowNotFound: no workflow `workflow_id`.
            CancellationPendingError: no worker took the cancellation within
                `pickup_timeout` (its worker died, say): the workflow stays
                cancelled and ends, keeping its turn's part, once one starts.
            DispatchFailed: Temporal refused the cancellation.
        """
        return await self._cancel(workflow_id) != "ended"

    async def _cancel(self, workflow_id: WorkflowId) -> _Cancelled:
        """Cancel the running workflow `workflow_id` (see `cancel`); say what became of it."""
        client = await self.client()
        description = await self._describe(client, workflow_id)
        if description.status != WorkflowExecutionStatus.RUNNING:
            return "ended"
        handle = client.get_workflow_handle(workflow_id)
        try:
            await handle.cancel()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                # It ended since it was described (or never was: that raises here).
                await self._describe(client, workflow_id)
                return "ended"
            raise _rpc_error(exc, workflow_id) from exc
        if await self._terminated_unstarted(client, handle):
            return "unstarted"
        await self._ended_cancelled(client, handle)
        return "cancelled"

    async def _ended_cancelled(self, client: Client, handle: WorkflowHandle[Any, Any]) -> None:
        """Wait for the cancelled workflow `handle` to end, while a worker is there to end it.

        Raises:
            CancellationPendingError: no worker took the cancellation within
                `pickup_timeout` (its worker died, say); it stays cancelled.
        """
        waiting = asyncio.ensure_future(handle.result())
        try:
            await self._taken(client, handle.id, waiting, CancellationPendingError)
        except WorkflowFailureError:
            return  # it ended cancelled
        except RPCError as exc:
            raise _rpc_error(exc, handle.id) from exc

    async def _taken(
        self,
        client: Client,
        workflow_id: WorkflowId,
        waiting: asyncio.Future[_T],
        untaken: type[NoWorkerError],
    ) -> _T:
        """Return what `waiting` gives, which takes a worker; raise `untaken` if none comes.

        Checked each `pickup_timeout`: the workflow's next task waiting that long
        for a worker means none is there to end the wait. `waiting` is
        cancelled when given up on.

        Raises:
            NoWorkerError: `untaken`, naming the task queue and how to start a worker.
        """
        try:
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=self._pickup_timeout)
                if done:
                    return waiting.result()
                waited = self._pickup_timeout or 0.0
                queue = await self._untaken_task_queue(client, workflow_id, waited)
                if queue is not None:
                    raise untaken(
                        workflow_id=workflow_id,
                        task_queue=queue,
                        address=self._where(),
                        waited=waited,
                    )
        finally:
            # Only when given up on: a result wait cancelled before its end leaves
            # the test server's time skipping locked.
            if not waiting.done():
                waiting.cancel()
                await asyncio.gather(waiting, return_exceptions=True)

    async def _untaken_task_queue(
        self, client: Client, workflow_id: WorkflowId, waited: float
    ) -> str | None:
        """The task queue of `workflow_id` if its next task has waited `waited` s for a worker."""
        description = await self._describe(client, workflow_id)
        pending = description.raw_description.pending_workflow_task
        if pending.state != PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED:
            return None
        scheduled = pending.scheduled_time.ToDatetime(tzinfo=UTC)
        if datetime.now(UTC) - scheduled < timedelta(seconds=waited):
            return None
        return description.task_queue

    async def _terminated_unstarted(self, client: Client, handle: WorkflowHandle[Any, Any]) -> bool:
        """Terminate the cancelled workflow `handle` if no worker has started it; say if so.

        Its cancellation would wait for a worker to see it, forever if none
        comes; nothing of it ran, so nothing is lost. A worker that starts it
        meanwhile sees the cancellation first and runs nothing of it.
        """
        description = await self._describe(client, handle.id)
        # Untouched, and the cancellation request its one event more.
        if description.history_length > _UNTOUCHED_HISTORY + 1 or description.close_time:
            return False
        try:
            await handle.terminate(reason=_CANCELLED_UNSTARTED)
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return False  # it ended meanwhile, on a worker that saw the cancellation
            raise _rpc_error(exc, handle.id) from exc
        return True

    async def signal(self, target: WorkflowId, payload: SignalPayload) -> None:
        """Put `payload` in the inbox of the running workflow `target`.

        Raises:
            WorkflowNotFound: no workflow `target`.
            SignalFailed: `target` has finished (Temporal signals running workflows only).
        """
        client = await self.client()
        try:
            await client.get_workflow_handle(target).signal(INBOX_SIGNAL, payload)
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise SignalFailed(f"signalling workflow {target!r} failed: {exc}") from exc
            await self._describe(client, target)
            raise SignalFailed(
                f"workflow {target!r} has finished; Temporal delivers signals to running "
                "workflows only"
            ) from exc

    async def query(self, target: WorkflowId, payload: QueryPayload) -> JsonValue:
        """Answer a question about workflow `target` (a worker must be running).

        Query types: `status`, `inbox`, `output`, `delegations`, answered as
        neuron-orch-local answers them (see `neuron_orch_local.query`).

        Raises:
            WorkflowNotFound: no workflow `target`.
            UnknownQueryError: an unknown query type; the message lists the known ones.
            QueryUnansweredError: no worker answered within `pickup_timeout`.
        """
        client = await self.client()
        if payload.query_type not in QUERY_TYPES:
            await self._describe(client, target)
            raise UnknownQueryError(payload.query_type, QUERY_TYPES)
        args = () if payload.params is None else (payload.params,)
        handle = client.get_workflow_handle(target)
        answer: JsonValue = await self._query(handle, payload.query_type, *args)
        return answer

    async def _query(
        self,
        handle: WorkflowHandle[Any, Any],
        name: str,
        *args: Any,
        result_type: type | None = None,
        timeout: timedelta | None = None,
    ) -> Any:
        """Ask the workflow of `handle` query `name`, waiting `timeout` (default: `pickup_timeout`).

        Raises:
            WorkflowNotFound: no such workflow.
            QueryUnansweredError: no worker answered in time.
            DispatchFailed: the query failed in the workflow, or Temporal refused it.
        """
        workflow_id = handle.id
        if timeout is None and self._pickup_timeout is not None:
            # Held to a day: the SDK's conversion overflows (1e300) or panics (1e12) past it.
            timeout = timedelta(seconds=min(self._pickup_timeout, _MAX_RPC_WAIT))
        loop = asyncio.get_running_loop()
        asked = loop.time()
        try:
            return await handle.query(name, *args, result_type=result_type, rpc_timeout=timeout)
        except RPCError as exc:
            if not _unanswered(exc):
                raise _rpc_error(exc, workflow_id) from exc
            # The wait asked for, when it ran out: a loaded machine takes longer to say so.
            waited = round(loop.time() - asked, 1)
            if exc.status != RPCStatusCode.FAILED_PRECONDITION and timeout is not None:
                waited = timeout.total_seconds()
            raise await self._no_answer(handle, name, waited) from exc
        except WorkflowQueryFailedError as exc:
            failed = f"query {name!r} of workflow {workflow_id!r} failed: {exc}"
            raise DispatchFailed(failed) from exc

    async def _no_answer(
        self, handle: WorkflowHandle[Any, Any], name: str, waited: float
    ) -> QueryUnansweredError:
        """The error of query `name` that no worker answered within `waited` s.

        Raises:
            WorkflowNotFound: there is no such workflow (its task queue names none).
        """
        try:
            description = await handle.describe()
        except RPCError as exc:
            raise _rpc_error(exc, handle.id) from exc
        return QueryUnansweredError(
            query=name,
            workflow_id=handle.id,
            task_queue=description.task_queue,
            address=self._where(),
            waited=waited,
        )

    async def _check_agent(self, client: Client, workflow_id: WorkflowId, agent: AgentId) -> None:
        description = await self._describe(client, workflow_id)
        running: object = await description.memo_value("agent", None)
        if running != agent:
            raise DispatchFailed(
                f"workflow {workflow_id!r} already exists for agent {running!r}, "
                f"not {agent!r}; a workflow id names one dispatch"
            )

    async def _check_picked_up(
        self, handle: WorkflowHandle[Any, DispatchResult], waiting: asyncio.Future[DispatchResult]
    ) -> None:
        """Fail with `NoWorkerError`, terminating the workflow, if no worker has touched it."""
        description = await handle.describe()
        if description.history_length > _UNTOUCHED_HISTORY or description.close_time is not None:
            return
        waited = self._pickup_timeout or 0.0
        error = NoWorkerError(
            workflow_id=handle.id, task_queue=self._task_queue, address=self._where(), waited=waited
        )
        await handle.terminate(reason=str(error))
        # The wait ends with the termination; its error is this one.
        await asyncio.gather(waiting, return_exceptions=True)
        raise error

    async def _describe(
        self, client: Client, workflow_id: WorkflowId
    ) -> WorkflowExecutionDescription:
        try:
            return await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            raise _rpc_error(exc, workflow_id) from exc

    def _where(self) -> str:
        if self._client is None:
            return self._address
        return self._client.service_client.config.target_host


async def _watch(handle: WorkflowHandle[Any, DispatchResult], after: int | None) -> Settled | None:
    """Wait for the workflow's next pause (see `AgentWorkflow.settled`); None if it cannot tell.

    The result wait beside it reports the workflow's end and failures; this
    one only ever adds a pause, so its own errors (a workflow that ended
    first, a worker from before approvals) leave that wait to answer.
    """
    if after is None:
        return None
    try:
        settled: Settled = await handle.execute_update(SETTLED_UPDATE, after, result_type=Settled)
    except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, RPCError):
        return None
    return settled


def _may_be_applied(workflow_id: WorkflowId) -> str:
    """What a wait for a workflow to take decisions, ended early, says of them.

    They may still be applied: the server keeps the update it was sent for
    the workflow's next worker.
    """
    return (
        f"the decisions may have reached workflow {workflow_id!r}, and a worker taking "
        "them resumes its turn"
    )


def _unconfirmed(workflow_id: WorkflowId) -> BaseException:
    """What a caller gets when the SDK ends the wait for a workflow to take its decisions.

    The Temporal SDK reports a cancelled wait as an error of its own; a caller
    whose task is cancelled (Ctrl-C) gets its cancellation back, anything else
    a `DispatchFailed`; either says that the decisions may still be applied.
    """
    pending = _may_be_applied(workflow_id)
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        cancelled = asyncio.CancelledError()
        cancelled.add_note(pending)
        return cancelled
    return DispatchFailed(
        f"waiting for workflow {workflow_id!r} to take the decisions failed; {pending}"
    )


def _unanswered(exc: RPCError) -> bool:
    """Whether a query failed for want of a worker to answer it.

    The server says so once it has seen no worker poll the task queue for a
    while; before that, the query waits for one until its timeout.
    """
    if exc.status == RPCStatusCode.FAILED_PRECONDITION:
        return "poller" in exc.message
    return exc.status in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)


def _too_large(exc: RPCError) -> bool:
    """Whether the server refused a payload for its size ("Blob data size exceeds limit")."""
    return exc.status == RPCStatusCode.INVALID_ARGUMENT and "size exceeds limit" in exc.message


def _rpc_error(exc: RPCError, workflow_id: WorkflowId) -> OrchError:
    if exc.status == RPCStatusCode.NOT_FOUND:
        return WorkflowNotFound(workflow_id)
    return DispatchFailed(f"Temporal refused a call about workflow {workflow_id!r}: {exc}")
