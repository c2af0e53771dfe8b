"""Lifecycle vocabulary: budget, compaction and observability events."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import ConfigDict, Field, Tag

from ._scalars import F64, U64
from ._tagged import UNIT, ExternalVariant, Frozen, external_union
from .content import Content
from .duration import DurationMs
from .ids import AgentId, WorkflowId
from .json_value import Json
from .money import Cost
from .scope import Scope

__all__ = [
    "BudgetAction",
    "BudgetDecision",
    "BudgetEvent",
    "BudgetWarning",
    "CompactionComplete",
    "CompactionEvent",
    "ContextPressure",
    "CostIncurred",
    "DowngradeModel",
    "EventSource",
    "ObservableEvent",
    "PreCompactionFlush",
    "ProviderManaged",
    "RequestIncrease",
]


class DowngradeModel(ExternalVariant):
    """Switch to a cheaper model: `{"downgrade_model": {"from": …, "to": …}}`."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, serialize_by_alias=True)
    tag: ClassVar[str] = "downgrade_model"
    from_: str = Field(alias="from")
    to: str


class RequestIncrease(ExternalVariant):
    """Ask for more budget: `{"request_increase": {"amount": "…"}}`."""

    tag: ClassVar[str] = "request_increase"
    amount: Cost


BudgetDecision: TypeAlias = Annotated[
    Annotated[Literal["continue", "halt_workflow"], Tag(UNIT)]
    | Annotated[DowngradeModel, Tag("downgrade_model")]
    | Annotated[RequestIncrease, Tag("request_increase")],
    *external_union(
        ("continue", "halt_workflow"), (DowngradeModel, RequestIncrease), name="budget_decision"
    ),
]
"""What to do about a budget: go on, downgrade, halt, or ask for more."""


class CostIncurred(Frozen):
    """An agent spent `cost`; `cumulative` is the workflow's total."""

    type: Literal["cost_incurred"] = "cost_incurred"
    agent: AgentId
    cost: Cost
    cumulative: Cost


class BudgetWarning(Frozen):
    """A workflow is near its limit."""

    type: Literal["budget_warning"] = "budget_warning"
    workflow: WorkflowId
    spent: Cost
    limit: Cost


class BudgetAction(Frozen):
    """A budget decision taken for a workflow."""

    type: Literal["budget_action"] = "budget_action"
    workflow: WorkflowId
    action: BudgetDecision


BudgetEvent: TypeAlias = Annotated[
    CostIncurred | BudgetWarning | BudgetAction, Field(discriminator="type")
]
"""A budget event; tagged by `"type"`."""


class ContextPressure(Frozen):
    """An agent's context is filling up."""

    type: Literal["context_pressure"] = "context_pressure"
    agent: AgentId
    fill_percent: F64
    tokens_used: U64
    tokens_available: U64


class PreCompactionFlush(Frozen):
    """Save what matters to `scope` before the context is compacted."""

    type: Literal["pre_compaction_flush"] = "pre_compaction_flush"
    agent: AgentId
    scope: Scope


class CompactionComplete(Frozen):
    """A compaction finished and freed `tokens_freed`."""

    type: Literal["compaction_complete"] = "compaction_complete"
    agent: AgentId
    strategy: str
    tokens_freed: U64


class ProviderManaged(Frozen):
    """The model provider compacted the context itself."""

    type: Literal["provider_managed"] = "provider_managed"
    agent: AgentId
    provider: str
    tokens_before: U64
    tokens_after: U64
    summary: Content | None = None


CompactionEvent: TypeAlias = Annotated[
    ContextPressure | PreCompactionFlush | CompactionComplete | ProviderManaged,
    Field(discriminator="type"),
]
"""A context-compaction event; tagged by `"type"`."""


class EventSource(StrEnum):
    """Which layer an observable event came from."""

    TURN = "turn"
    ORCHESTRATION = "orchestration"
    STATE = "state"
    ENVIRONMENT = "environment"
    HOOK = "hook"


class ObservableEvent(Frozen):
    """One event for tracing and dashboards."""

    source: EventSource
    event_type: str
    timestamp: DurationMs
    """Milliseconds (since the epoch or the run's start, as the emitter documents)."""
    data: Json
    trace_id: str | None = None
    workflow_id: WorkflowId | None = None
    agent_id: AgentId | None = None
