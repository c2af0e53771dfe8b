"""Errors of neuron-orch-local beyond the layer0 ones.

layer0.OrchError
└── UnknownQueryError   `query` was asked a query type it does not answer
"""

from __future__ import annotations

from collections.abc import Iterable

from layer0 import OrchError

__all__ = ["UnknownQueryError"]


class UnknownQueryError(OrchError, ValueError):
    """`query` was asked a query type it does not answer; the message lists those it does."""

    def __init__(self, query_type: str, supported: Iterable[str]) -> None:
        self.query_type = query_type
        self.supported = tuple(sorted(supported))
        super().__init__(
            f"unknown query type {query_type!r}; supported: {', '.join(self.supported)}"
        )
