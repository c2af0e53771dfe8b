"""Answers to `query`: read-only JSON views of a workflow.

The query types and their answers, the same on every orchestrator that
follows neuron-orch-local's conventions:

- `status`: `{workflow_id, status, agent, exit_reason, parent, route, error}`;
- `inbox`: the signals received, oldest first, as `SignalPayload` JSON;
- `output`: the last `TurnOutput` as JSON, or null before there is one;
- `delegations`: `[{agent, workflow_id, output}]` in the order they ran.

`answer_query` reads any object of the shape of `WorkflowLike`: a
`WorkflowRecord` here, the state a Temporal workflow keeps there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, Protocol

from pydantic import JsonValue, TypeAdapter

from layer0 import AgentId, ExitReason, SignalPayload, TurnOutput, WorkflowId

from .errors import UnknownQueryError

__all__ = ["QUERY_TYPES", "DelegationLike", "WorkflowLike", "answer_query"]

_EXIT_REASON: Final = TypeAdapter[ExitReason](ExitReason)


class DelegationLike(Protocol):
    """What a `delegations` answer reads of one delegation."""

    @property
    def agent(self) -> AgentId:
        """The agent delegated to."""
        ...

    @property
    def workflow_id(self) -> WorkflowId:
        """The child workflow it ran in."""
        ...

    @property
    def output(self) -> TurnOutput:
        """What it returned."""
        ...


class WorkflowLike(Protocol):
    """What the answers read of a workflow (the fields of `WorkflowRecord`)."""

    @property
    def workflow_id(self) -> WorkflowId:
        """The workflow's id."""
        ...

    @property
    def agent(self) -> AgentId:
        """The agent running now, or the last one that ran."""
        ...

    @property
    def status(self) -> str:
        """`running`, `completed` or `failed`."""
        ...

    @property
    def parent(self) -> WorkflowId | None:
        """The workflow whose delegation started this one, if any."""
        ...

    @property
    def route(self) -> Sequence[AgentId]:
        """The agents that ran, in order."""
        ...

    @property
    def output(self) -> TurnOutput | None:
        """The last output of a turn, if any."""
        ...

    @property
    def error(self) -> str | None:
        """Why the workflow failed, when it did."""
        ...

    @property
    def inbox(self) -> Sequence[SignalPayload]:
        """The signals received, oldest first."""
        ...

    @property
    def delegations(self) -> Sequence[DelegationLike]:
        """The delegations' results, in the order they ran."""
        ...


def _output_json(output: TurnOutput | None) -> JsonValue:
    return None if output is None else output.model_dump(mode="json")


def _status(workflow: WorkflowLike) -> JsonValue:
    output = workflow.output
    return {
        "workflow_id": workflow.workflow_id,
        "status": str(workflow.status),
        "agent": workflow.agent,
        "exit_reason": None
        if output is None
        else _EXIT_REASON.dump_python(output.exit_reason, mode="json"),
        "parent": workflow.parent,
        "route": list(workflow.route),
        "error": workflow.error,
    }


def _inbox(workflow: WorkflowLike) -> JsonValue:
    return [payload.model_dump(mode="json") for payload in workflow.inbox]


def _output(workflow: WorkflowLike) -> JsonValue:
    return _output_json(workflow.output)


def _delegations(workflow: WorkflowLike) -> JsonValue:
    return [
        {"agent": d.agent, "workflow_id": d.workflow_id, "output": _output_json(d.output)}
        for d in workflow.delegations
    ]


_ANSWERS: Final[Mapping[str, Callable[[WorkflowLike], JsonValue]]] = {
    "status": _status,
    "inbox": _inbox,
    "output": _output,
    "delegations": _delegations,
}

QUERY_TYPES: Final = frozenset(_ANSWERS)
"""The query types `answer_query` knows."""


def answer_query(workflow: WorkflowLike, query_type: str) -> JsonValue:
    """Answer the query `query_type` about `workflow` (see the module doc).

    Raises:
        UnknownQueryError: `query_type` is not one of `QUERY_TYPES`.
    """
    try:
        respond = _ANSWERS[query_type]
    except KeyError:
        raise UnknownQueryError(query_type, QUERY_TYPES) from None
    return respond(workflow)
