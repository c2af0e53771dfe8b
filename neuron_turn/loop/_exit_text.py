"""An exit reason as people read it: the command line's summaries, `show` and the viewer."""

from __future__ import annotations

from layer0 import CustomExit, ExitReason, ObserverHalt

__all__ = ["exit_reason_text"]


def exit_reason_text(reason: ExitReason) -> str:
    """Return an exit reason as one short word or phrase (`custom (handoff)`, say)."""
    if isinstance(reason, ObserverHalt):
        return f"observer_halt ({reason.reason})"
    if isinstance(reason, CustomExit):
        return f"custom ({reason.name})"
    return reason
