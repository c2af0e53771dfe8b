"""`EffectPolicy`: which effects a turn may declare, checked by the turn and its orchestrator.

A turn's effects are requests; the caller decides which it carries out. By
default a turn may address only its own session's memory (read and write):
the conversation it was given. Everything else is granted, one grant string
at a time:

| grant | allows |
|---|---|
| `global` | `write_memory` / `delete_memory` in the global scope |
| `session:<id>`, `session:*` | memory of that session, of any session |
| `workflow:<id>`, `workflow:*` | memory of that workflow, of any workflow |
| `agent:<workflow>/<agent>`, `agent:*` | memory of that agent, of any agent |
| `custom:<name>`, `custom:*` | memory of that custom scope, of any custom scope |
| `delegate`, `delegate:<agent>` | `delegate` effects to any agent, to that agent |
| `handoff`, `handoff:<agent>` | `handoff` effects to any agent, to that agent |
| `signal`, `signal:<workflow>` | `signal` effects to any workflow, to that workflow |
| `read:<scope grant>` | reading memory in those scopes: `read:global`, `read:session:*`, ... |
| `*` | everything, reading included |

`session` alone names the turn's own session, which is always granted, for
reading and writing. Reading is what the memory tools of `neuron_turn`
(`read_memory`, `list_memory`, `search_memory`) do; `read:*` reads any
scope. Reading and writing are granted apart: `global` lets a turn write
global memory, not read it (`read:global` does); a scope shared by several
agents is often written by one and read by others, and reading another
conversation's memory can leak what was said there.

`log` effects are always allowed; `custom` effects are governed by the
handlers the orchestrator was given, except `append_history` (see
`layer0.history`), which counts as a write to its session's memory.

`layer0.effect_refusal` says why an effect is outside a policy. The same
policy serves both sides: `NeuronTurn` offers the model only the
granted effect tools and answers a call outside the grant with a tool error;
orchestrators refuse a turn whose output holds an effect outside the policy
of the agent they dispatched, whoever wrote that output.

On the wire a policy is `{"grants": ["global", "delegate:researcher"]}`; it
travels as `TurnConfig.effect_policy`, a key the Rust reference ignores
(see `layer0.config`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, TypeAlias

from pydantic import ValidationError, field_validator

from ._tagged import Frozen
from .ids import SessionId
from .scope import AgentScope, CustomScope, Scope, SessionScope, WorkflowScope

__all__ = ["EffectKind", "EffectPolicy", "scope_text"]

EffectKind: TypeAlias = Literal["delegate", "handoff", "signal"]
"""The effect kinds granted by kind (and target) rather than by scope."""

_SCOPE_KINDS: Final = frozenset({"session", "workflow", "agent", "custom"})
_EFFECT_KINDS: Final[frozenset[str]] = frozenset({"delegate", "handoff", "signal"})
_ANY: Final = "*"
_OWN_SESSION: Final = "session"
_READ: Final = "read:"


def scope_text(scope: Scope) -> str:
    """Return `scope` as grants and effect tools spell it (`global`, `session:<id>`, ...)."""
    if isinstance(scope, SessionScope):
        return f"session:{scope.id}"
    if isinstance(scope, WorkflowScope):
        return f"workflow:{scope.id}"
    if isinstance(scope, AgentScope):
        return f"agent:{scope.workflow}/{scope.agent}"
    if isinstance(scope, CustomScope):
        return f"custom:{scope.name}"
    return "global"


class EffectPolicy(Frozen):
    """The effects a turn may declare beyond its own session's memory (see the module doc).

    `EffectPolicy()` grants nothing more than the turn's own session;
    `EffectPolicy.everything()` grants every effect.
    """

    grants: tuple[str, ...] = ()
    """Grant strings, as in the table of the module doc."""

    @field_validator("grants")
    @classmethod
    def _check(cls, grants: tuple[str, ...]) -> tuple[str, ...]:
        for grant in grants:
            problem = _grant_problem(grant)
            if problem is not None:
                raise ValueError(f"bad grant {grant!r}: {problem}")
        return grants

    @classmethod
    def everything(cls) -> EffectPolicy:
        """Return the policy that grants every effect (for turns you trust fully)."""
        return cls(grants=(_ANY,))

    @classmethod
    def of(cls, grants: Iterable[str]) -> EffectPolicy:
        """Return the policy of `grants`.

        Raises:
            ValueError: a grant is malformed; the message names it and says why.
        """
        try:
            return cls(grants=tuple(grants))
        except ValidationError as exc:
            raise ValueError(
                "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            ) from None

    def allows_scope(self, scope: Scope, session: SessionId | None) -> bool:
        """Return whether memory in `scope` may be written or deleted by a turn of `session`."""
        if isinstance(scope, SessionScope) and scope.id == session:
            return True
        kind, _, name = scope_text(scope).partition(":")
        return any(_matches(grant, kind, name) for grant in self.grants)

    def allows_read(self, scope: Scope, session: SessionId | None) -> bool:
        """Return whether memory in `scope` may be read by a turn of `session`."""
        if isinstance(scope, SessionScope) and scope.id == session:
            return True
        kind, _, name = scope_text(scope).partition(":")
        return any(_matches(grant, kind, name) for grant in self.read_grants())

    def read_grants(self) -> tuple[str, ...]:
        """Return the scope grants opening reads beyond the own session (`read:` removed).

        `*` (everything) counts as `read:*`.
        """
        return tuple(
            _ANY if grant == _ANY else grant.removeprefix(_READ)
            for grant in self.grants
            if grant == _ANY or grant.startswith(_READ)
        )

    def allows(self, kind: EffectKind, target: str) -> bool:
        """Return whether a `kind` effect naming `target` (agent or workflow) is granted."""
        return any(_matches(grant, kind, target) for grant in self.grants)

    def grants_kind(self, kind: EffectKind) -> bool:
        """Return whether any `kind` effect is granted at all."""
        return any(grant in (_ANY, kind) or grant.startswith(f"{kind}:") for grant in self.grants)

    def targets(self, kind: EffectKind) -> tuple[str, ...] | None:
        """Return the only targets granted for `kind`, or None when any target is."""
        named: list[str] = []
        for grant in self.grants:
            if grant in (_ANY, kind, f"{kind}:{_ANY}"):
                return None
            if grant.startswith(f"{kind}:"):
                named.append(grant.partition(":")[2])
        return tuple(named)

    def memory_grants(self) -> tuple[str, ...]:
        """Return the grants that open memory scopes other than the turn's own session."""
        return tuple(
            g for g in self.grants if g in (_ANY, "global") or g.partition(":")[0] in _SCOPE_KINDS
        )

    def granted_text(self) -> str:
        """Return what is granted, for refusal messages: `granted: own session, global`."""
        extra = ", ".join(self.grants)
        return f"granted: own session{', ' + extra if extra else ' only'}"


def _matches(grant: str, kind: str, name: str) -> bool:
    if grant == _ANY:
        return True
    if grant == "global":
        return kind == "global"
    grant_kind, colon, grant_name = grant.partition(":")
    if grant_kind != kind:
        return False
    if not colon:
        return kind in _EFFECT_KINDS
    return grant_name in (_ANY, name)


def _grant_problem(grant: str) -> str | None:
    """Return what is wrong with `grant`, or None when it is well formed."""
    if grant in (_ANY, "global", _OWN_SESSION) or grant in _EFFECT_KINDS:
        return None
    if grant.startswith(_READ):
        return _read_problem(grant.removeprefix(_READ))
    kind, colon, name = grant.partition(":")
    known = sorted(_SCOPE_KINDS | _EFFECT_KINDS | {"global", "read", _ANY})
    if kind not in _SCOPE_KINDS | _EFFECT_KINDS:
        return f"unknown kind {kind!r}; grants start with one of {', '.join(known)}"
    if not colon or not name:
        return f"say which {kind}: '{kind}:<id>' or '{kind}:*'"
    if kind == "agent" and name != _ANY:
        workflow, slash, agent = name.partition("/")
        if not (slash and workflow and agent):
            return "an agent scope is 'agent:<workflow>/<agent>' or 'agent:*'"
    return None


def _read_problem(scopes: str) -> str | None:
    """Return what is wrong with the scope grant after `read:`, or None."""
    if scopes in (_ANY, "global", _OWN_SESSION):
        return None
    kind = scopes.partition(":")[0]
    if kind not in _SCOPE_KINDS:
        return (
            "a read grant names memory scopes: read:global, read:session:<id>|*, "
            "read:workflow:<id>|*, read:agent:<workflow>/<agent>|*, read:custom:<name>|* "
            "or read:*"
        )
    return _grant_problem(scopes)
