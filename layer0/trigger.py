"""`TriggerType`: what started a turn."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Tag

from ._tagged import UNIT, ExternalVariant, external_union

__all__ = ["CustomTrigger", "TriggerKind", "TriggerType"]

TriggerKind: TypeAlias = Literal["user", "task", "signal", "schedule", "system_event"]
"""The triggers layer0 names; anything else is a `CustomTrigger`."""


class CustomTrigger(ExternalVariant):
    """A trigger of the caller's own kind: `{"custom": "<name>"}`."""

    tag: ClassVar[str] = "custom"
    newtype: ClassVar[str | None] = "name"
    name: str


TriggerType: TypeAlias = Annotated[
    Annotated[TriggerKind, Tag(UNIT)] | Annotated[CustomTrigger, Tag("custom")],
    *external_union(
        ("user", "task", "signal", "schedule", "system_event"), (CustomTrigger,), name="trigger"
    ),
]
"""What started a turn: a `TriggerKind` string or a `CustomTrigger`."""
