"""Integer and float field types with the reference's ranges and strictness.

The reference rejects `5.0`, `"1500"` and `true` where it wants an integer,
so these are strict: pydantic's lax coercion would accept all three.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field, Strict

U16_MAX: Final = 2**16 - 1
U32_MAX: Final = 2**32 - 1
U64_MAX: Final = 2**64 - 1

U16 = Annotated[int, Strict(), Field(ge=0, le=U16_MAX)]
U32 = Annotated[int, Strict(), Field(ge=0, le=U32_MAX)]
U64 = Annotated[int, Strict(), Field(ge=0, le=U64_MAX)]
F64 = Annotated[float, Field(allow_inf_nan=False, strict=True)]
StrictBool = Annotated[bool, Strict()]
