"""`Case`: one scenario of a dataset, its inputs and what is expected of the answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from layer0 import TurnInput

if TYPE_CHECKING:
    from .evaluator import Evaluator

__all__ = ["Case"]


@dataclass(frozen=True, init=False)
class Case:
    """One row of a `Dataset`, as pydantic-evals' `Case`.

    `inputs` is the user's message (a string) or a whole `layer0.TurnInput`;
    a task that is a `Turn` gets a string as `TurnInput(message=..., trigger="user")`.
    `expected_output` is what `EqualsExpected` (and the judge, if asked) compares
    with; `metadata` is the case's own data, for evaluators and the report;
    `evaluators` run for this case only, after the dataset's.
    """

    name: str
    inputs: str | TurnInput
    expected_output: object = None
    metadata: Mapping[str, object] = field(default_factory=dict)
    evaluators: tuple[Evaluator, ...] = ()

    def __init__(
        self,
        name: str,
        inputs: str | TurnInput,
        expected_output: object = None,
        metadata: Mapping[str, object] | None = None,
        evaluators: Sequence[Evaluator] = (),
    ) -> None:
        """Create a case; `metadata` None means none."""
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "expected_output", expected_output)
        object.__setattr__(self, "metadata", dict(metadata or {}))
        object.__setattr__(self, "evaluators", tuple(evaluators))

    def turn_input(self) -> TurnInput:
        """Return the inputs as a `TurnInput` (a string becomes a user message)."""
        if isinstance(self.inputs, TurnInput):
            return self.inputs
        return TurnInput(message=self.inputs, trigger="user")
