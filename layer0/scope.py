"""`Scope`: the namespace a piece of state lives in."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Tag

from ._tagged import UNIT, ExternalVariant, external_union
from .ids import AgentId, SessionId, WorkflowId

__all__ = ["AgentScope", "CustomScope", "Scope", "SessionScope", "WorkflowScope"]


class SessionScope(ExternalVariant):
    """State of one conversation: `{"session": "<id>"}`."""

    tag: ClassVar[str] = "session"
    newtype: ClassVar[str | None] = "id"
    id: SessionId


class WorkflowScope(ExternalVariant):
    """State of one workflow: `{"workflow": "<id>"}`."""

    tag: ClassVar[str] = "workflow"
    newtype: ClassVar[str | None] = "id"
    id: WorkflowId


class AgentScope(ExternalVariant):
    """State of one agent within a workflow: `{"agent": {"workflow": …, "agent": …}}`."""

    tag: ClassVar[str] = "agent"
    workflow: WorkflowId
    agent: AgentId


class CustomScope(ExternalVariant):
    """A scope of the caller's own naming: `{"custom": "<name>"}`."""

    tag: ClassVar[str] = "custom"
    newtype: ClassVar[str | None] = "name"
    name: str


Scope: TypeAlias = Annotated[
    Annotated[Literal["global"], Tag(UNIT)]
    | Annotated[SessionScope, Tag("session")]
    | Annotated[WorkflowScope, Tag("workflow")]
    | Annotated[AgentScope, Tag("agent")]
    | Annotated[CustomScope, Tag("custom")],
    *external_union(
        ("global",), (SessionScope, WorkflowScope, AgentScope, CustomScope), name="scope"
    ),
]
"""Where state lives: `"global"` or a session, workflow, agent or custom scope."""
