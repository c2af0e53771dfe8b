"""Identifier types: plain JSON strings on the wire."""

from __future__ import annotations

from typing import TypeAlias

AgentId: TypeAlias = str
"""Names an agent (a Turn an orchestrator can dispatch to)."""

SessionId: TypeAlias = str
"""Names a conversation whose history persists across turns."""

WorkflowId: TypeAlias = str
"""Names one orchestrated workflow (a dispatch and what it spawned)."""

ScopeId: TypeAlias = str
"""Names a state scope chosen by the caller."""
