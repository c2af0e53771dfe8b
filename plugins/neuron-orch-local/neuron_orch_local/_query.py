"""Answers to `query`: read-only JSON views of a workflow record."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from pydantic import JsonValue, TypeAdapter

from layer0 import ExitReason, QueryPayload, TurnOutput

from .errors import UnknownQueryError
from .workflow import WorkflowRecord

__all__ = ["QUERY_TYPES", "answer"]

_EXIT_REASON: Final = TypeAdapter[ExitReason](ExitReason)


def _output_json(output: TurnOutput | None) -> JsonValue:
    return None if output is None else output.model_dump(mode="json")


def _status(record: WorkflowRecord) -> JsonValue:
    output = record.output
    return {
        "workflow_id": record.workflow_id,
        "status": record.status.value,
        "agent": record.agent,
        "exit_reason": None
        if output is None
        else _EXIT_REASON.dump_python(output.exit_reason, mode="json"),
        "parent": record.parent,
        "route": list(record.route),
        "error": record.error,
    }


def _inbox(record: WorkflowRecord) -> JsonValue:
    return [payload.model_dump(mode="json") for payload in record.inbox]


def _output(record: WorkflowRecord) -> JsonValue:
    return _output_json(record.output)


def _delegations(record: WorkflowRecord) -> JsonValue:
    return [
        {"agent": d.agent, "workflow_id": d.workflow_id, "output": _output_json(d.output)}
        for d in record.delegations
    ]


_ANSWERS: Final[Mapping[str, Callable[[WorkflowRecord], JsonValue]]] = {
    "status": _status,
    "inbox": _inbox,
    "output": _output,
    "delegations": _delegations,
}

QUERY_TYPES: Final = frozenset(_ANSWERS)
"""The query types `answer` knows."""


def answer(record: WorkflowRecord, payload: QueryPayload) -> JsonValue:
    """Answer `payload` about `record`; `params` are not used by any query type yet.

    - `status`: `{workflow_id, status, agent, exit_reason, parent, route, error}`;
    - `inbox`: the signals received, oldest first;
    - `output`: the last `TurnOutput` as JSON, or null before there is one;
    - `delegations`: `[{agent, workflow_id, output}]` in the order they ran.

    Raises:
        UnknownQueryError: `payload.query_type` is none of these.
    """
    try:
        respond = _ANSWERS[payload.query_type]
    except KeyError:
        raise UnknownQueryError(payload.query_type, QUERY_TYPES) from None
    return respond(record)
