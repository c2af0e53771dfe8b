"""`QueryPayload`: a read-only question put to a running workflow."""

from __future__ import annotations

from ._tagged import Frozen
from .json_value import Json

__all__ = ["QueryPayload"]


class QueryPayload(Frozen):
    """What to ask a workflow, and with which parameters."""

    query_type: str
    params: Json
