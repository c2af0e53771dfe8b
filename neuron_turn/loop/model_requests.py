"""Real model requests refused in tests: pydantic-ai's `ALLOW_MODEL_REQUESTS = False`.

A test suite that builds agents through `NeuronTurn.from_plugins` can reach a
real model by accident (a key in the environment, a forgotten `override`) and
spend money or flake on the network. Inside `block_model_requests()` every model
call a turn makes (its steps, a context strategy's summary, MCP sampling) fails
before it is sent, unless its provider says it makes no request to a model: the
test providers of `neuron_turn.testing` do (`model_requests = False`), as may a
test double of one's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from layer0 import NonRetryableError

__all__ = ["ModelRequestsBlockedError", "block_model_requests", "check_model_request"]


class ModelRequestsBlockedError(NonRetryableError):
    """A turn asked a real model inside `block_model_requests()`; nothing was sent."""


class _Blocks:
    """How many `block_model_requests()` blocks are open, process-wide."""

    open = 0


@contextmanager
def block_model_requests() -> Iterator[None]:
    """Refuse every real model request in this process until the block ends.

    Process-wide, as pydantic-ai's flag is (a test session, a fixture); blocks nest.
    """
    _Blocks.open += 1
    try:
        yield
    finally:
        _Blocks.open -= 1


def check_model_request(provider: object) -> None:
    """Raise if a request of `provider` would reach a model inside `block_model_requests()`.

    Raises:
        ModelRequestsBlockedError: it would (naming the provider's class).
    """
    if _Blocks.open and getattr(provider, "model_requests", True):
        raise ModelRequestsBlockedError(
            f"a model request by {type(provider).__name__} was refused: model requests are "
            "blocked here (block_model_requests()); give the turn a test provider, e.g. "
            "`with turn.override(provider=ScriptedProvider([...])):`, or mark a test double "
            "of your own `model_requests = False`"
        )
