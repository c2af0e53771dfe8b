"""The pydantic models that cross the engine between client, workflow and activities.

They go through `temporalio.contrib.pydantic`'s data converter, built only of
layer0 models, strings and integers, so a cost stays a decimal string and
nothing becomes a float on the way.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

from layer0 import (
    AgentId,
    CustomEffect,
    DeleteMemoryEffect,
    EffectPolicy,
    SessionId,
    TurnInput,
    TurnOutput,
    WorkflowId,
    WriteMemoryEffect,
)
from neuron_orch_local import Chain

from .policy import TurnPolicy

__all__ = [
    "CustomRequest",
    "Delegation",
    "DispatchResult",
    "IndexedMemoryEffect",
    "Interruption",
    "KeptPart",
    "MemoryEffect",
    "MemoryRequest",
    "TurnCheckpoint",
    "TurnRequest",
    "TurnResult",
    "WorkflowInput",
]

MemoryEffect: TypeAlias = Annotated[
    WriteMemoryEffect | DeleteMemoryEffect | CustomEffect, Field(discriminator="type")
]
"""An effect on the state store: a write, a delete or an `append_history` custom effect."""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class WorkflowInput(_Message):
    """What starts one agent workflow: a dispatch, a delegation or a handoff."""

    agent: AgentId
    input: TurnInput
    chain: Chain
    policy: TurnPolicy
    parent: WorkflowId | None = None
    """The workflow whose delegation or handoff started this one, if any."""
    granted: EffectPolicy | None = None
    """The dispatching caller's effect policy for the first turn (its
    `TurnConfig.effect_policy`); None in delegations and handoffs, whose turns
    get their agents' policies from the worker."""
    progress: bool = False
    """Report the turns' progress events to the workflow (`TemporalOrchestrator.stream`)."""
    decided_by: str | None = None
    """The key of the decisions `input` carries (`DecideRequest.key`), when a delegating
    turn's resume started this workflow to resume its agent: that key decided pause 0."""
    held: bool = False
    """A delegation its `parent`'s turn waits on in a session of its own: a pause of this
    workflow holds the parent's `delegate` call, and the parent's pause lists its calls."""
    delegated_for: SessionId | None = None
    """The session of the nearest turn above that delegated with one, at any depth: what
    this workflow's turns record without a session of their own (`TurnRequest`), for
    `neuron_turn.forget_session` to find them by. None: not delegated, or by no session
    (and from a workflow started before this field existed)."""
    payload_limit: int | None = None
    """The largest payload this workflow hands Temporal (its result, a turn's request, a
    child's input), in bytes of JSON: past it, it fails with `PayloadTooLargeError` (see
    `_payload_limit`). None: no limit (large payloads are kept out of the history, or the
    workflow was started before this field existed)."""


class TurnRequest(_Message):
    """One turn to run, and where it sits (for error messages and plan checks)."""

    workflow_id: WorkflowId
    agent: AgentId
    input: TurnInput
    route: str
    """The chain's route, `a -> b`, named in errors."""
    granted: EffectPolicy | None = None
    """The caller's effect policy for this turn, replacing the agent's (see `WorkflowInput`)."""
    progress: bool = False
    """Signal the turn's progress events to the workflow as they happen."""
    chain: Chain | None = None
    """Where the turn sits, for the delegations it waits on (None: they are not answered,
    as from a workflow started before this field existed)."""
    policy: TurnPolicy | None = None
    """The dispatch's policy, which those delegations' workflows get too."""
    turn: int = 0
    """The turn's number within its workflow, from 0 (part of its delegations' ids)."""
    answered: bool = False
    """Return a `TurnResult` naming the delegations the turn waited on (False: the output
    alone, as a workflow started before this field existed expects)."""
    continues: bool = False
    """Return a turn that failed part-way as its partial output with an `Interruption`, for
    the workflow to carry out and then continue or fail (False: fail the activity, and
    Temporal runs the turn again whole, as a workflow started before this field existed
    expects). Only with `answered`."""
    delegated_for: SessionId | None = None
    """The session its workflow was delegated for (`WorkflowInput.delegated_for`): the
    turn's record names it when the turn has no session (`layer0.TurnRecord`), and the
    delegations the turn waits on are delegated for the turn's session, else for it."""


class IndexedMemoryEffect(_Message):
    """A memory effect with its index among the turn's effects (its idempotency key)."""

    index: int
    effect: MemoryEffect


class MemoryRequest(_Message):
    """The memory effects of one turn, to apply once, all together."""

    workflow_id: WorkflowId
    run_id: str
    turn: int
    """The turn's number within its workflow run, from 0."""
    agent: AgentId
    effects: tuple[IndexedMemoryEffect, ...]


class CustomRequest(_Message):
    """A `custom` effect for the worker's handler of its type."""

    workflow_id: WorkflowId
    agent: AgentId
    effect: CustomEffect


class Delegation(_Message):
    """The result of one `delegate` effect: who ran, in which child workflow, with what output."""

    agent: AgentId
    workflow_id: WorkflowId
    output: TurnOutput
    held: bool = False
    """The agent paused for approval, holding the call of the turn that waited on it: its
    workflow waits for the decisions that turn's resume hands it."""


class Interruption(_Message):
    """Why a turn's output is partial, and how it goes on (see `layer0.PartialTurn`)."""

    continuation: TurnInput
    """The input that continues the turn once the partial output's effects are carried out
    (for a turn that reads no continuation, its input again)."""
    error: str
    """The class name of the layer0 error that ended this part (`RetryableError`),
    `CancelledError` for a turn Temporal cancelled, or `AttemptLost` for the part an
    attempt lost with no result left (`TurnCheckpoint`)."""
    message: str
    """Its message (for a cancelled turn, why: its workflow was cancelled, its worker shut down)."""
    retry_after_ms: int | None = None
    """The wait the provider asked for, if it did."""
    attempts: int
    """The activity's attempts for this part, the failed one included."""
    last: bool = False
    """The error is not one a retry may fix: the workflow carries out the part, so the
    session says which tools ran, then fails (as it does when the attempts are spent);
    or the workflow was cancelled, and it ends cancelled once the part is carried out."""


class KeptPart(_Message):
    """The part of its turn a cancelled workflow carried out, and the input that goes on from it.

    What the `kept` query answers, so that a dispatch stopped by its
    cancellation hands it on as `layer0.PartialTurn` (`layer0.partial_of`).
    """

    output: TurnOutput
    """The part as carried out (NeuronTurn: exit `{"custom": "interrupted"}`)."""
    continuation: TurnInput
    """The input that continues the turn (for one that reads no continuation, its input again)."""


class TurnCheckpoint(_Message):
    """The turn so far, as an attempt's heartbeats carry it: what a later attempt goes on from.

    Taken after each round of tool calls (`neuron_turn.checkpointing`); an attempt
    lost with no result (its worker killed, its time out) leaves the latest.
    """

    output: TurnOutput
    """The partial output: what the turn did up to the end of that round."""
    continuation: TurnInput
    """The input that goes on from it (for a turn that reads no continuation, its input again)."""
    delegations: tuple[Delegation, ...] = ()
    """The delegations the turn had waited on by then (`TurnResult.delegations`)."""


class TurnResult(_Message):
    """What the turn activity returns when asked (`TurnRequest.answered`)."""

    output: TurnOutput
    delegations: tuple[Delegation, ...] = ()
    """The delegations the turn waited on (its `delegate` calls answered with their
    agents' outputs), in the order they finished."""
    interrupted: Interruption | None = None
    """Set when `output` is a partial turn to carry out and continue (`TurnRequest.continues`)."""

    @model_validator(mode="before")
    @classmethod
    def _from_output(cls, data: Any) -> Any:
        # During a rolling upgrade a worker from before `answered` may run the turn
        # and return the output alone; the workflow must still read it.
        if isinstance(data, dict) and "output" not in data and "exit_reason" in data:
            return {"output": data}
        return data


class DispatchResult(_Message):
    """Everything one dispatch produced: the workflow's result.

    `dispatch` returns only `output`, as the layer0 protocol asks; `run`
    returns this (the same shape as neuron-orch-local's `DispatchResult`).
    """

    workflow_id: WorkflowId
    agent: AgentId
    """The agent whose output this is: the one dispatched to, or the last handoff's."""
    output: TurnOutput
    route: tuple[AgentId, ...]
    """The agents that ran for this dispatch, in order (more than one after handoffs)."""
    delegations: tuple[Delegation, ...]
    """Results of the delegations the workflow's turns made, in effect order."""
