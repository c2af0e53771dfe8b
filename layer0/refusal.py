"""`effect_refusal`: whether an effect is inside an `EffectPolicy`, and if not, why."""

from __future__ import annotations

from .effect import (
    CustomEffect,
    DelegateEffect,
    DeleteMemoryEffect,
    Effect,
    HandoffEffect,
    LogEffect,
    SignalEffect,
    WriteMemoryEffect,
)
from .effect_policy import EffectKind, EffectPolicy, scope_text
from .history import APPEND_HISTORY, HistoryAppend
from .ids import SessionId
from .scope import Scope, SessionScope

__all__ = ["effect_refusal"]


def effect_refusal(policy: EffectPolicy, effect: Effect, session: SessionId | None) -> str | None:
    """Return why `effect`, declared by a turn of `session`, is outside `policy`; None if inside.

    `log` effects are always inside; `custom` effects other than
    `append_history` are left to the orchestrator's handlers.
    """
    if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect):
        return _scope(policy, effect.type, effect.scope, session)
    if isinstance(effect, DelegateEffect):
        return _kind(policy, "delegate", effect.agent, "agent")
    if isinstance(effect, HandoffEffect):
        return _kind(policy, "handoff", effect.agent, "agent")
    if isinstance(effect, SignalEffect):
        return _kind(policy, "signal", effect.target, "workflow")
    if isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
        try:
            append = HistoryAppend.from_effect(effect)
        except ValueError as exc:
            return str(exc)
        return _scope(policy, APPEND_HISTORY, SessionScope(id=append.session), session)
    assert isinstance(effect, LogEffect | CustomEffect)
    return None


def _scope(policy: EffectPolicy, what: str, scope: Scope, session: SessionId | None) -> str | None:
    if policy.allows_scope(scope, session):
        return None
    return f"{what} in scope {scope_text(scope)!r} is not granted ({policy.granted_text()})"


def _kind(policy: EffectPolicy, kind: EffectKind, target: str, noun: str) -> str | None:
    if policy.allows(kind, target):
        return None
    return f"{kind} to {noun} {target!r} is not granted ({policy.granted_text()})"
