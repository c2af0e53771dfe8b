"""Delegation that answers back: the child agent's output as the parent's `delegate` result.

While a `NeuronTurn` runs under an orchestrator, its `delegate` tool does
not just declare a delegation: the orchestrator runs the other agent (in
a child workflow, with that agent's own limits) while the parent's turn
waits, and the model gets the child's answer as the tool's result (see
`neuron_turn.EffectAnswer`). What the child spent is added to the parent
turn's tokens and cost, so the parent's output metadata holds the whole
tree's totals and the parent's `max_cost` counts its children too. In
place of the `delegate` effect, the parent's output declares a `log`
record of the delegation (`DELEGATION_LOG` in its data: agent, child
workflow, exit reason, tokens, cost).

One answerer serves every attempt of a turn (retries, fallback models): a
task it has answered (same agent, same input) is answered again from
memory, so a re-run turn does not run and pay for the same child twice
(neuron-orch-temporal gets the same from its deterministic child ids).

A child that pauses for approval pauses its parent too, when the
orchestrator can resume it (it gives the answerer a `check_child`, as
`LocalOrchestrator` and neuron-orch-temporal's worker do) and the parent's
turn can find the held call again (it has a session and reads its history):
the child then runs in a session of its own (`neuron_turn.delegation_session`),
the parent's pause lists the child's held calls, and the parent's resume
resumes the child with their decisions, checked first (`check_decisions`).
Otherwise the child runs without a session and its pause ends it: the
parent's model is told which calls did not run.

What cannot be delegated is told to the model as a tool error, and
nothing runs: an agent outside the caller's grant, an unknown agent, a
delegation cycle (A waits on B waits on A) or one past the depth limit. A
child that fails is a tool error too, naming its error, so the parent can
carry on without it. The answerer tells the model so of every effect-tool
call its orchestrator would refuse after the turn (`call_refusal`: a handoff
to an unknown agent or past the depth limit, a signal to a workflow there is
not, an effect outside the orchestrator's policy for the agent), since that
refusal would fail the whole turn, its history with it; given no `run_child`,
it only does that, and delegations are left declared, to run after the turn.
Hand-written turns declaring `delegate` effects in their outputs keep the
one-way behaviour (the child runs after the turn, its output in
`DispatchResult.delegations`).

These conventions are shared by the orchestrators (neuron-orch-temporal's
worker answers the same way); the loop is imported only when they are used.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Collection, Container
from typing import TYPE_CHECKING, Final

from pydantic import JsonValue, ValidationError

from layer0 import (
    AgentId,
    DelegateEffect,
    DispatchFailed,
    Effect,
    EffectPolicy,
    LogEffect,
    LogLevel,
    OrchError,
    SessionId,
    SignalEffect,
    Turn,
    TurnInput,
    TurnOutput,
    WorkflowId,
)

from .chain import Chain
from .checks import call_refusal
from .fallback import FallbackTurn

if TYPE_CHECKING:
    from neuron_turn import EffectAnswer, EffectAnswerer, PendingCall

__all__ = [
    "DELEGATION_LOG",
    "CheckChild",
    "DelegationAnswerer",
    "RunChild",
    "Running",
    "check_delegated_resume",
    "delegation_answer",
    "delegation_record",
]

DELEGATION_LOG: Final = "delegation"
"""The key of a delegation's record in the data of the `log` effect that stands for it."""

RunChild = Callable[[DelegateEffect, Chain], Awaitable[tuple[WorkflowId, TurnOutput]]]
"""Runs the delegated agent in a child workflow; returns its workflow id and final output."""

CheckChild = Callable[[DelegateEffect, Chain], Awaitable[None]]
"""Checks the decisions a resumed delegation carries against its agent's pause, running nothing."""

Running = Callable[[WorkflowId], Awaitable[bool | None]]
"""Whether a workflow runs and takes signals (false or None: it finished, or there is none)."""


def delegation_record(agent: AgentId, workflow_id: WorkflowId, output: TurnOutput) -> LogEffect:
    """Return the `log` effect recording one answered delegation."""
    metadata = output.metadata
    data: dict[str, JsonValue] = {
        DELEGATION_LOG: {
            "agent": agent,
            "workflow_id": workflow_id,
            "exit_reason": _reason(output),
            "tokens_in": metadata.tokens_in,
            "tokens_out": metadata.tokens_out,
            "cost": str(metadata.cost.amount),
        }
    }
    return LogEffect(
        level=LogLevel.INFO,
        message=f"delegated to agent {agent!r} in workflow {workflow_id}: {_reason(output)}",
        data=data,
    )


def delegation_answer(
    agent: AgentId, workflow_id: WorkflowId, output: TurnOutput, *, resumable: bool = False
) -> EffectAnswer:
    """Return what the parent's model is told of the child's `output`, with its totals.

    `resumable`: the child ran in a session its parent's resume can resume, so a
    pause for approval holds the parent's call (`EffectAnswer.held`) rather than
    answering it.
    """
    from neuron_turn import EffectAnswer

    held = _held(agent, output) if resumable else ()
    complete = output.exit_reason == "complete"
    text = _paused(agent, output) if not complete else None
    if text is None:
        text = output.message.as_text()
        if text is None:
            text = json.dumps(output.message.model_dump(mode="json"), ensure_ascii=False)
        if not complete:
            text = f"Agent {agent!r} stopped before finishing ({_reason(output)}): {text}"
    metadata = output.metadata
    return EffectAnswer(
        text=text,
        is_error=not complete,
        effects=(delegation_record(agent, workflow_id, output),),
        tokens_in=metadata.tokens_in,
        tokens_out=metadata.tokens_out,
        cost=metadata.cost,
        held=held,
    )


class DelegationAnswerer:
    """Answers the `delegate` effects of one turn by running the child and waiting for it.

    It also refuses, as the model makes them, the effect-tool calls the
    orchestrator would refuse after the turn (see the module).
    """

    def __init__(
        self,
        *,
        run_child: RunChild | None,
        chain: Chain,
        policy: EffectPolicy,
        session: SessionId | None,
        agents: Collection[AgentId],
        check_child: CheckChild | None = None,
        workflows: Container[WorkflowId] | None = None,
        running: Running | None = None,
    ) -> None:
        """Answer for the turn at `chain`, within `policy`, delegating only to `agents`.

        `run_child` None: delegations are checked, not run (left declared).
        `check_child` given, a child pausing for approval pauses the turn, and
        resumes with it (see the module): `run_child` must then run a task in the
        session it names, and `check_child` check a resume's decisions. Without
        it, the child runs without a session, and its pause ends it.
        `workflows`: those a signal may name; or `running` asked of each signal's
        target (Temporal's); neither: signals are not checked.
        """
        self._run_child = run_child
        self._workflows = workflows
        self._running = running
        self._check_child = check_child
        self._chain = chain
        self._policy = policy
        self._session = session
        self._agents = agents
        # A retried or fallen-back turn delegating the same task again takes the
        # answer the first run got, rather than running (and paying for) the child again.
        self._answered: dict[str, EffectAnswer] = {}

    async def __call__(self, effect: Effect) -> EffectAnswer | None:
        """Run the delegation `effect` and answer with the child's output.

        An effect the orchestrator would refuse is answered with the refusal;
        None for the others, left declared as usual.
        """
        workflows = self._workflows
        if isinstance(effect, SignalEffect) and self._running is not None:
            try:
                running = await self._running(effect.target)
            except Exception:
                # Not known now: left to the orchestrator's check after the turn.
                running = True
            workflows = (effect.target,) if running else ()
        refusal = call_refusal(
            effect,
            policy=self._policy,
            session=self._session,
            agents=self._agents,
            chain=self._chain,
            workflows=workflows,
        )
        if refusal is not None:
            return _error(refusal)
        if not isinstance(effect, DelegateEffect) or self._run_child is None:
            return None
        resumable = self._check_child is not None and effect.input.session is not None
        if not resumable and effect.input.session is not None:
            # A child its parent cannot resume would wait for decisions nobody can send.
            effect = effect.model_copy(
                update={"input": effect.input.model_copy(update={"session": None})}
            )
        chain = self._chain.delegate(effect.agent)  # checked by call_refusal
        task = effect.model_dump_json()
        if task in self._answered:
            return self._answered[task]
        try:
            workflow_id, output = await self._run_child(effect, chain)
        except OrchError as exc:
            return _error(f"Error: agent {effect.agent!r} failed: {exc}")
        answer = delegation_answer(effect.agent, workflow_id, output, resumable=resumable)
        self._answered[task] = answer
        return answer

    async def check_decisions(self, effect: DelegateEffect) -> None:
        """Check the decisions resumed delegation `effect` hands its agent, running nothing.

        One that cannot be delegated is not checked: it fails as the call's result.

        Raises:
            neuron_turn.ApprovalError: they do not fit the agent's pause.
        """
        if self._check_child is None or effect.agent not in self._agents:
            return
        try:
            chain = self._chain.delegate(effect.agent)
        except DispatchFailed:
            return
        await self._check_child(effect, chain)


async def check_delegated_resume(
    turn: Turn | None, input: TurnInput, answerer: EffectAnswerer | None
) -> None:
    """Check resume `input` of a delegated agent's `turn` against its pause, running nothing.

    As that agent's turn checks its resume (`NeuronTurn.check_resume`), under
    `answerer` (what its own delegations get), so theirs are checked too; a
    fallback chain with its first model, which the resume goes to. Other turns
    check their decisions when they run. An orchestrator's `check_child`.

    Raises:
        neuron_turn.ApprovalError: the decisions do not fit the agent's pause.
    """
    from neuron_turn import NeuronTurn, answering  # the loop, only when a turn runs here

    if isinstance(turn, FallbackTurn):
        turn = turn.models[0][1]
    if not isinstance(turn, NeuronTurn):
        return
    with contextlib.nullcontext() if answerer is None else answering(answerer):
        await turn.check_resume(input)


def _held(agent: AgentId, output: TurnOutput) -> tuple[PendingCall, ...]:
    """The calls a child paused for approval waits on, each naming its agent (empty: none)."""
    from neuron_turn import AWAITING_APPROVAL, pending_approvals

    if output.exit_reason != AWAITING_APPROVAL:
        return ()
    try:
        held = pending_approvals(output)
    except ValidationError:
        return ()  # a hand-written turn's malformed pause: its output is quoted instead
    return tuple(c if c.agent is not None else c.model_copy(update={"agent": agent}) for c in held)


def _paused(agent: AgentId, output: TurnOutput) -> str | None:
    """What the parent's model is told of a child paused for approval (None: it did not pause).

    A delegated task has no session to resume, so the held calls will not run;
    the model is told which they were, to say so or to go another way.
    """
    from neuron_turn import AWAITING_APPROVAL, pending_approvals

    if output.exit_reason != AWAITING_APPROVAL:
        return None
    try:
        held = pending_approvals(output)
    except ValidationError:
        return None  # a hand-written turn's malformed pause: its output is quoted instead
    if not held:
        return None
    calls = ", ".join(f"{c.name}({json.dumps(c.input, ensure_ascii=False)})" for c in held)
    return (
        f"Agent {agent!r} stopped before finishing: its calls {calls} need a person's "
        "approval, which a delegated task cannot wait for, so they did not run"
    )


def _error(text: str) -> EffectAnswer:
    from neuron_turn import EffectAnswer

    return EffectAnswer(text=text, is_error=True)


def _reason(output: TurnOutput) -> str:
    reason = output.model_dump(mode="json")["exit_reason"]
    return reason if isinstance(reason, str) else json.dumps(reason, sort_keys=True)
