"""`LocalOrchestrator`: runs agents' turns in this process and carries out their effects."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import weakref
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from pydantic import JsonValue

from layer0 import (
    AgentId,
    DelegateEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    EffectPolicy,
    EffectRefused,
    HandoffEffect,
    HistoryAppend,
    QueryPayload,
    SessionId,
    SignalPayload,
    StateStore,
    Turn,
    TurnInput,
    TurnOutput,
    TurnRecord,
    TurnRecordStore,
    WorkflowId,
    WriteMemoryEffect,
)

if TYPE_CHECKING:
    from neuron_turn import EventStream

from ._effects import EffectPlan, EffectRunner
from ._memory import MemoryEffect
from ._table import WorkflowTable
from .chain import Chain
from .checks import require_agent
from .custom import CustomEffectHandler, EffectContext
from .delegation import DelegationAnswerer, check_delegated_resume
from .dispatcher import Dispatcher
from .errors import MemoryNotAppliedError
from .fallback import FallbackTurn, Keep, run_attempts
from .handoff import handoff_input
from .placement import Placement
from .query import answer_query
from .recording import TurnRecording, delegating_from
from .result import DispatchResult
from .retry import Clock, RetryPolicy, SystemClock
from .signals import AWAITING_SIGNAL, signal_input
from .streaming import SINK, AgentEvent, execute_streamed
from .workflow import Delegation, WorkflowRecord

__all__ = ["LocalOrchestrator"]

_NO_HANDLERS: Final[Mapping[str, CustomEffectHandler]] = MappingProxyType({})
_NO_POLICIES: Final[Mapping[AgentId, EffectPolicy]] = MappingProxyType({})
_OWN_SESSION_ONLY: Final = EffectPolicy()


class LocalOrchestrator(Dispatcher[DispatchResult]):
    """A `layer0.Orchestrator` that runs turns in this process, on one event loop.

    `dispatch` runs the agent's turn in a workflow, then carries out the
    effects it declared, in order: memory effects on `store` (all of one
    turn's at once, all or none), signals into workflows' inboxes, `log` to
    the logger `neuron_orch_local`, `custom` to the handler of its type,
    delegations as child workflows (their outputs are recorded on the
    workflow and in `run`'s `DispatchResult`), and last the handoff, whose
    agent's output becomes the dispatch's (see `neuron_orch_local.handoff`
    for the input it gets).

    While a `NeuronTurn` runs, its `delegate` calls are answered: the other
    agent runs in a child workflow and the model gets its answer as the
    tool's result, its tokens and cost added to the turn's
    (`neuron_orch_local.delegation`). A turn that fails with `RetryableError`
    is retried within `retry`; an agent that is a `FallbackTurn` falls back
    on its next model (`neuron_orch_local.fallback`). A turn exiting with
    `{"custom": "await_signal"}` keeps its workflow open until the next
    signal, which starts the agent's next turn (`neuron_orch_local.signals`).

    Before any effect runs, every effect is checked against the effect policy
    of the agent that declared it (`policies`, else `default_policy`; for the
    agent dispatched to, the caller's `TurnConfig.effect_policy` when given):
    a turn with an effect outside it fails the dispatch with `EffectRefused`,
    and none of its effects run, whoever wrote the turn's output.

    Dispatches from callers on one session run one at a time, so that each
    turn reads the history the previous one wrote; the history itself only
    ever grows by appends (`layer0.history`), so dispatches from other
    orchestrators or processes on the same store lose nothing either.
    Workflow records live in memory only; the oldest finished ones are
    dropped past `max_workflows`.
    """

    def __init__(
        self,
        agents: Mapping[AgentId, Turn | Mapping[str, Turn]],
        store: StateStore,
        *,
        max_depth: int = 8,
        max_concurrency: int = 8,
        custom_handlers: Mapping[str, CustomEffectHandler] = _NO_HANDLERS,
        max_workflows: int = 10_000,
        environments: Mapping[AgentId, Placement] | None = None,
        policies: Mapping[AgentId, EffectPolicy] = _NO_POLICIES,
        default_policy: EffectPolicy = _OWN_SESSION_ONLY,
        retry: RetryPolicy | Mapping[str, JsonValue] | None = None,
        clock: Clock | None = None,
        randomness: Callable[[], float] = random.random,
        signal_timeout: float | None = 24 * 60 * 60,
        answer_delegations: bool = True,
    ) -> None:
        """Orchestrate `agents` (by name) over `store`.

        Args:
            agents: the turns that can be dispatched to, delegated to and handed off to;
                an agent given as a mapping of model names to turns is a
                `FallbackTurn` over them.
            store: where memory effects go; give the agents' turns the same store
                to read from.
            max_depth: how many delegations and handoffs deep one dispatch may go.
            max_concurrency: how many dispatches of one `dispatch_many` call run at once.
            custom_handlers: the handler of each `custom` effect type.
            max_workflows: how many finished workflows' records to keep for
                `signal` and `query`.
            environments: agents whose turns run in an environment (a child
                process, a sandbox) rather than here; a name is either in
                `agents` or here, not both.
            policies: the effect policy of each agent, by name.
            default_policy: the policy of agents not in `policies` (default:
                their own session's memory only).
            retry: how a turn raising `RetryableError` is retried (default:
                `RetryPolicy()`, 3 attempts; `RetryPolicy(max_attempts=1)` never
                retries; a mapping is read as a `RetryPolicy`'s JSON form). An
                agent that is a `FallbackTurn` tries its next model once a model's
                retries run out or it fails in a way no retry fixes. A store
                refusing a turn's memory effects with `WriteFailed` is asked
                again within it too (the turn does not run again).
            clock: what retries wait on (default: the real one; tests give a fake).
            randomness: numbers in [0, 1) for the retries' jitter.
            signal_timeout: seconds a workflow whose turn asked to `await_signal`
                waits for a signal before it ends (None: for ever; see
                `neuron_orch_local.signals`).
            answer_delegations: a `NeuronTurn`'s `delegate` calls wait for the other
                agent, whose answer is the tool's result (see
                `neuron_orch_local.delegation`); False: they are only declared, and
                run after the turn.
        """
        turns = {name: _chain(name, turn) for name, turn in agents.items()}
        _check_arguments(turns, store, max_depth, max_workflows)
        super().__init__(max_concurrency=max_concurrency)
        self._agents: dict[AgentId, Turn] = {**turns, **_placed(turns, environments or {})}
        unknown = sorted(set(policies) - set(self._agents))
        if unknown:
            raise ValueError(f"policies name agents that do not exist: {', '.join(unknown)}")
        self._store = store
        # Checked once: a runtime-checkable isinstance costs µs per turn.
        self._keeps_records = isinstance(store, TurnRecordStore)
        self._policies = dict(policies)
        self._default_policy = default_policy
        # A chain is immutable: each agent's root chain is built once, not per dispatch.
        self._roots = {agent: Chain.root(agent, max_depth=max_depth) for agent in self._agents}
        self._workflows = WorkflowTable(max_records=max_workflows)
        self._retry = (
            retry if isinstance(retry, RetryPolicy) else RetryPolicy.model_validate(retry or {})
        )
        self._clock = SystemClock() if clock is None else clock
        self._randomness = randomness
        self._effects = EffectRunner(
            store=store,
            workflows=self._workflows,
            agents=self._agents.keys(),
            handlers=dict(custom_handlers),
            retry=self._retry,
            clock=self._clock,
            randomness=randomness,
        )
        self._signal_timeout = signal_timeout
        self._answer_delegations = answer_delegations
        self._session_locks: weakref.WeakValueDictionary[SessionId, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def __repr__(self) -> str:
        return f"LocalOrchestrator(agents={sorted(self._agents)!r}, store={self._store!r})"

    @property
    def agents(self) -> tuple[AgentId, ...]:
        """The names of the agents, sorted."""
        return tuple(sorted(self._agents))

    @property
    def store(self) -> StateStore:
        """The store memory effects are applied to."""
        return self._store

    async def run(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> DispatchResult:
        """Like `dispatch`, but return the workflow id, route and delegations too.

        `workflow_id` names the workflow (one is generated when it is None);
        the id of a finished workflow continues it, keeping its inbox.

        Raises:
            AgentNotFound: no agent `agent` (the message lists the agents), or
                an effect names an agent that does not exist.
            WorkflowNotFound: a signal effect names a workflow that does not exist.
            DispatchFailed: a turn raised (chained as `__cause__`, so a
                `layer0.RetryableError` is there to decide retries by), an
                effect failed, the depth limit or a delegation cycle was hit,
                or `workflow_id` names a workflow that is still running.
        """
        require_agent(agent, self._agents)
        granted = None if input.config is None else input.config.effect_policy
        async with self._one_at_a_time(input.session):
            return await self._workflow(
                agent,
                input,
                workflow_id=workflow_id,
                parent=None,
                chain=self._roots[agent],
                granted=granted,
            )

    def stream(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> EventStream[AgentEvent, DispatchResult]:
        """Like `run`, yielding every turn's events as they happen; `result` holds the result.

        Each event comes as an `AgentEvent` naming its workflow and agent:
        the dispatched agent's turn, then its delegations' and handoffs'.
        Effects are carried out exactly as by `run`, after each turn ends, so
        a turn that fails mid-stream has nothing of its own written but what
        its tools did (its partial turn, kept). Breaking out, `aclose()` or
        cancelling the consumer cancels the dispatch, keeping the same (the
        stream's `partial` is what the turn had done). Errors are those of `run`,
        raised by the iteration.

        Example::

            async with orchestrator.stream("main", input) as events:
                async for item in events:
                    if isinstance(item.event, TextDelta):
                        print(item.event.text, end="")
            output = events.result.output

        Raises:
            AgentNotFound: no agent `agent` (at once, before iterating).
        """
        from neuron_turn import EventStream  # the loop, only when a dispatch streams

        require_agent(agent, self._agents)

        async def runner(sink: Callable[[AgentEvent], None]) -> DispatchResult:
            # Set in the stream's own task: only this dispatch's turns see it.
            SINK.set(sink)
            return await self.run(agent, input, workflow_id=workflow_id)

        return EventStream(runner)

    async def signal(self, target: WorkflowId, payload: SignalPayload) -> None:
        """Put `payload` in the inbox of workflow `target`; raises `WorkflowNotFound`."""
        self._workflows.deliver(target, payload)

    async def query(self, target: WorkflowId, payload: QueryPayload) -> JsonValue:
        """Answer a question about workflow `target`; `payload.params` is not used yet.

        Query types: `status`, `inbox`, `output`, `delegations` (their
        answers are described in `neuron_orch_local.query`).

        Raises:
            WorkflowNotFound: no workflow `target`.
            UnknownQueryError: an unknown query type; the message lists the known ones.
        """
        return answer_query(self._workflows.get(target), payload.query_type)

    async def apply_memory(self, effects: Sequence[MemoryEffect]) -> None:
        """Write memory effects to the store, all or none: a `MemoryNotAppliedError`'s, later.

        Why: a turn whose writes the store refused has them on its error
        (`effects`); once the store takes writes again, this writes them as the
        dispatch would have (history appends last, each once by its turn id, so
        writing them twice keeps one copy), asking again within `retry`.

        Raises:
            MemoryNotAppliedError: the store refused them again; none was written.
            TypeError: an item is not a memory write, delete or history append.
        """
        for effect in effects:
            if not isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend):
                raise TypeError(
                    "apply_memory takes WriteMemoryEffect, DeleteMemoryEffect and "
                    f"HistoryAppend items, not {type(effect).__name__}"
                )
        await self._effects.apply_memory(effects, "a call to apply_memory")

    def policy(self, agent: AgentId) -> EffectPolicy:
        """Return the effect policy of `agent` (see `__init__`)."""
        return self._policies.get(agent, self._default_policy)

    async def cancel(self, workflow_id: WorkflowId) -> bool:
        """Cancel the running workflow `workflow_id`, wait for its end; say whether it ran.

        Its turn stops where it is: what its tools did is kept in the session
        (the turn's cancellation, which carries it, is the `__cause__`), the
        delegations it waits on stop with it, and its dispatch raises
        `DispatchFailed` saying it was cancelled, while the caller's task goes
        on. A workflow that has ended is left as it is, and False returned.

        Raises:
            WorkflowNotFound: no workflow `workflow_id` (a dispatch still waiting
                for its session, on which another runs, has none yet).
            DispatchFailed: it is a delegation's, which runs in the task of the
                workflow that started it (cancel that one), or the caller's own.
        """
        return await self._workflows.cancel(workflow_id)

    def workflow(self, workflow_id: WorkflowId) -> WorkflowRecord:
        """Return the record of `workflow_id`; raises `WorkflowNotFound`."""
        return self._workflows.get(workflow_id)

    async def _workflow(
        self,
        agent: AgentId,
        input: TurnInput,
        *,
        workflow_id: WorkflowId | None,
        parent: WorkflowId | None,
        chain: Chain,
        granted: EffectPolicy | None = None,
    ) -> DispatchResult:
        """Open a workflow, run `agent` and its handoffs in it, close it.

        `granted` is the caller's policy for `agent`'s first turn, if any.
        """
        workflow_id = self._workflows.open(workflow_id, agent, parent=parent)
        try:
            output = await self._step(workflow_id, agent, input, chain, granted)
        except asyncio.CancelledError as exc:
            if not self._workflows.cancelled(workflow_id):
                self._workflows.finish(workflow_id, error=exc)
                raise
            # Stopped by `cancel`, not by its caller: the caller's task goes on.
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            failed = DispatchFailed(f"workflow {workflow_id} was cancelled")
            self._workflows.finish(workflow_id, error=failed)
            raise failed from exc  # the cancellation, with what its turn kept (`partial_of`)
        except BaseException as exc:
            self._workflows.finish(workflow_id, error=exc)
            raise
        # The snapshot before `finish`, which may drop the oldest records.
        record = self._workflows.get(workflow_id)
        self._workflows.finish(workflow_id)
        return DispatchResult(
            workflow_id=workflow_id,
            agent=record.agent,
            output=output,
            route=record.route,
            delegations=record.delegations,
        )

    async def _step(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None = None,
    ) -> TurnOutput:
        """Run the agent's turns in the workflow: follow handoffs, wake on signals."""
        while True:
            output, handoff = await self._turn(workflow_id, agent, input, chain, granted)
            if handoff is not None:
                effect, chain = handoff
                input = handoff_input(input, source=agent, state=effect.state)
                agent, granted = effect.agent, None
                continue
            if output.exit_reason != AWAITING_SIGNAL:
                return output
            payload = await self._workflows.next_signal(workflow_id, timeout=self._signal_timeout)
            if payload is None:
                return output
            input = signal_input(input, payload)

    async def _turn(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None,
    ) -> tuple[TurnOutput, tuple[HandoffEffect, Chain] | None]:
        """Run one turn of `agent` and its effects; return its output and its handoff."""
        self._workflows.ran(workflow_id, agent)
        recording = TurnRecording.start(
            self._store, agent, workflow_id, input, keeps_records=self._keeps_records
        )
        # The delegations it runs in its task are delegated for its session.
        with delegating_from(input.session):
            output, plan = await self._run_turn(
                workflow_id, agent, input, chain, granted, recording
            )
        return output, None if plan is None else plan.handoff

    async def _run_turn(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None,
        recording: TurnRecording | None,
    ) -> tuple[TurnOutput, EffectPlan | None]:
        """Run the turn and its effects but the handoff; record it; return output and plan."""
        turn_input = input if recording is None else recording.turn_input()
        answerer = self._answerer(workflow_id, agent, input, chain, granted)
        kept_as_cancelled = False

        async def keep(partial: TurnOutput, error: BaseException) -> bool:
            """Carry out a failed or cancelled attempt's part as a turn that ended there.

            Not one that declares a handoff, which only a finished turn may: that turn
            runs again whole. The part gets a record of its own.
            """
            nonlocal kept_as_cancelled
            if any(isinstance(effect, HandoffEffect) for effect in partial.effects):
                return False
            part = None if recording is None else recording.split()
            output = partial if part is None else part.returned(partial)
            await self._carry_out(workflow_id, agent, input, output, chain, granted, part, error)
            kept_as_cancelled = isinstance(error, asyncio.CancelledError)
            return True

        try:
            output = await self._execute(workflow_id, agent, turn_input, chain, answerer, keep)
            if recording is not None:
                output = recording.returned(output)
        except DispatchFailed as exc:
            if recording is not None:
                await recording.store_failure("failed", exc)
            raise
        except asyncio.CancelledError as exc:
            # A part kept as it was cancelled has its record (`keep`); else the stop has this.
            if recording is not None and not kept_as_cancelled:
                await asyncio.shield(recording.store_failure("failed", exc))
            raise
        plan = await self._carry_out(workflow_id, agent, input, output, chain, granted, recording)
        return output, plan

    async def _carry_out(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        output: TurnOutput,
        chain: Chain,
        granted: EffectPolicy | None,
        recording: TurnRecording | None,
        error: BaseException | None = None,
    ) -> EffectPlan | None:
        """Carry out a turn's effects but the handoff and store its record; return the plan.

        `error` is what ended a partial turn (`layer0.PartialTurn`), kept in its record.
        """
        self._workflows.produced(workflow_id, output)
        # Built as if all goes well, so the store can keep it with the turn's memory
        # effects in one transaction; a failure below replaces it.
        executed = None if recording is None else recording.record("executed", error)
        try:
            plan, recorded = await self._effects_of(
                workflow_id, agent, input, output, chain, granted, executed
            )
        except EffectRefused as exc:
            if recording is not None:
                await recording.store_failure("refused", exc)
            raise
        except Exception as exc:
            if isinstance(exc, MemoryNotAppliedError) and exc.output is None:
                exc.output = output  # the caller keeps the answer with the writes
            if recording is not None:
                await recording.store_failure("failed", exc)
            raise
        if recording is not None and executed is not None and not recorded:
            await recording.store.record_turn(executed)
        return plan

    def _answerer(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        chain: Chain,
        granted: EffectPolicy | None,
    ) -> DelegationAnswerer:
        """What answers the turn's delegations while it waits, and refuses what would fail.

        Without `answer_delegations` it only refuses: delegations are left declared.
        """
        answers = self._answer_delegations
        return DelegationAnswerer(
            run_child=functools.partial(self._answer_delegation, workflow_id) if answers else None,
            chain=chain,
            policy=granted if granted is not None else self.policy(agent),
            session=input.session,
            agents=self._agents.keys(),
            check_child=functools.partial(self._check_delegation, workflow_id) if answers else None,
            workflows=self._workflows,
        )

    async def _effects_of(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        output: TurnOutput,
        chain: Chain,
        granted: EffectPolicy | None,
        record: TurnRecord | None,
    ) -> tuple[EffectPlan | None, bool]:
        """Check and carry out the turn's effects but the handoff.

        Returns the plan (None: no effects) and whether `record` was stored with them.
        """
        if not output.effects:
            return None, False
        context = EffectContext(workflow_id=workflow_id, agent=agent)
        # A caller's grant is for the agent it dispatched to; the turns that
        # delegations and handoffs start get their agents' own policies.
        policy = granted if granted is not None else self.policy(agent)
        plan = self._effects.plan(
            output.effects, context=context, chain=chain, policy=policy, session=input.session
        )

        async def delegate(effect: DelegateEffect, child_chain: Chain) -> None:
            await self._delegate(workflow_id, effect, child_chain)

        recorded = await self._effects.run(plan, context=context, delegate=delegate, record=record)
        return plan, recorded

    async def _execute(
        self,
        workflow_id: WorkflowId,
        agent: AgentId,
        input: TurnInput,
        chain: Chain,
        answerer: DelegationAnswerer | None,
        keep: Keep,
    ) -> TurnOutput:
        from neuron_turn import answering  # the loop, only when a turn runs here

        turn = self._agents[agent]
        sink = SINK.get()

        async def attempt(candidate: Turn, input: TurnInput) -> TurnOutput:
            with contextlib.nullcontext() if answerer is None else answering(answerer):
                if sink is None:
                    return await candidate.execute(input)
                return await execute_streamed(candidate, input, sink, workflow_id, agent)

        try:
            return await run_attempts(
                turn.models if isinstance(turn, FallbackTurn) else ((agent, turn),),
                input,
                policy=self._retry,
                clock=self._clock,
                randomness=self._randomness,
                record=isinstance(turn, FallbackTurn),
                run=attempt,
                keep=keep,
            )
        except Exception as exc:
            notes = "".join(f"; {note}" for note in getattr(exc, "__notes__", ()))
            raise DispatchFailed(
                f"agent {agent!r} failed in workflow {workflow_id} (route: {chain.route()}): "
                f"{type(exc).__name__}: {exc}{notes}"
            ) from exc

    async def _answer_delegation(
        self, parent: WorkflowId, effect: DelegateEffect, chain: Chain
    ) -> tuple[WorkflowId, TurnOutput]:
        """Run a delegation a turn waits on (see `neuron_orch_local.delegation`)."""
        delegation = await self._delegate(parent, effect, chain)
        return delegation.workflow_id, delegation.output

    async def _check_delegation(
        self, parent: WorkflowId, effect: DelegateEffect, chain: Chain
    ) -> None:
        """Check the decisions a resumed delegation hands its agent, running nothing."""
        answerer = self._answerer(parent, effect.agent, effect.input, chain, None)
        await check_delegated_resume(self._agents.get(effect.agent), effect.input, answerer)

    async def _delegate(
        self, parent: WorkflowId, effect: DelegateEffect, chain: Chain
    ) -> Delegation:
        # A child's error propagates unchanged: it already names the route, and
        # re-wrapping it would bury a RetryableError below `__cause__`.
        child = await self._workflow(
            effect.agent, effect.input, workflow_id=None, parent=parent, chain=chain
        )
        delegation = Delegation(
            agent=effect.agent, workflow_id=child.workflow_id, output=child.output
        )
        self._workflows.delegated(parent, delegation)
        return delegation

    def _one_at_a_time(self, session: SessionId | None) -> AbstractAsyncContextManager[object]:
        """Return the lock that serialises the callers' dispatches on `session`."""
        if session is None:
            return contextlib.nullcontext()
        lock = self._session_locks.get(session)
        if lock is None:
            # Weak values: a session's lock lives only while a dispatch holds or awaits it.
            lock = self._session_locks[session] = asyncio.Lock()
        return lock


def _chain(name: AgentId, turn: Turn | Mapping[str, Turn]) -> Turn:
    """The agent's turn: a mapping of model names to turns is a `FallbackTurn`."""
    if isinstance(turn, Mapping):
        try:
            return FallbackTurn(turn)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"agent {name!r}: {exc}") from None
    return turn


def _placed(
    agents: Mapping[AgentId, Turn], environments: Mapping[AgentId, Placement]
) -> dict[AgentId, Turn]:
    """The placed agents, as turns (a `Placement` runs its environment when executed)."""
    for name, placement in environments.items():
        if name in agents:
            raise ValueError(f"agent {name!r} is in both `agents` and `environments`; keep one")
        if not isinstance(placement, Placement):
            raise TypeError(f"environments[{name!r}] is not a Placement: {placement!r}")
    return dict(environments)


def _check_arguments(
    agents: Mapping[AgentId, Turn],
    store: StateStore,
    max_depth: int,
    max_workflows: int,
) -> None:
    for name, turn in agents.items():
        if not isinstance(turn, Turn):
            raise TypeError(f"agent {name!r} is not a layer0.Turn (no async execute): {turn!r}")
    if not isinstance(store, StateStore):
        raise TypeError(f"store is not a layer0.StateStore: {store!r}")
    if max_depth < 0:
        raise ValueError(f"max_depth must not be negative, not {max_depth}")
    if max_workflows < 1:
        raise ValueError(f"max_workflows must be at least 1, not {max_workflows}")
