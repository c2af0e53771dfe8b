"""`DurationMs`: a duration as a plain JSON integer of milliseconds."""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import Field, Strict

from ._scalars import U64_MAX

DurationMs: TypeAlias = Annotated[int, Strict(), Field(ge=0, le=U64_MAX)]
"""Milliseconds, 0 to 2**64-1; floats, negatives and strings are rejected."""
