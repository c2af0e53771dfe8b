"""`EvaluatorContext`: what an evaluator sees of one case's run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from moneyed import Money
from pydantic import JsonValue

from layer0 import CustomExit, ExitReason, ObserverHalt, TurnInput, TurnOutput

from .errors import SpanTreeRecordingError
from .span_tree import SpanTree

__all__ = ["EvaluatorContext", "exit_reason_text"]


def exit_reason_text(reason: ExitReason) -> str:
    """Return an exit reason as one word: `complete`, `observer_halt`, `custom:<name>`."""
    if isinstance(reason, ObserverHalt):
        return "observer_halt"
    if isinstance(reason, CustomExit):
        return f"custom:{reason.name}"
    return reason


@dataclass(frozen=True, kw_only=True)
class EvaluatorContext:
    """One case's inputs, expectations and answer, as pydantic-evals' `EvaluatorContext`.

    `output` is the typed result when the task is a typed `NeuronTurn` (None
    when its turn ended without one), the turn's JSON result for another
    turn that left one, else the answer's text; a plain function's return
    value as it is. `turn_output` is the `TurnOutput` (None when the task
    returned something else), and `duration` the task's wall-clock seconds.
    """

    name: str
    """The case's name."""
    inputs: str | TurnInput
    """The case's inputs, as given."""
    output: object
    """The answer: typed, JSON or text (see the class docs)."""
    output_text: str
    """The answer's text (a non-text value as JSON)."""
    expected_output: object
    """The case's expected output (None when it has none)."""
    metadata: Mapping[str, object]
    """The case's metadata."""
    turn_output: TurnOutput | None
    """What the turn handed back, when the task returned a `TurnOutput`."""
    duration: float
    """Seconds the task ran."""
    evaluator_costs: list[Money] = field(default_factory=list, repr=False)
    """What evaluators spent on this case (a judge's model calls), apart from the task's."""
    spans: SpanTree | SpanTreeRecordingError = field(
        default_factory=lambda: SpanTreeRecordingError("this context was made without a run"),
        repr=False,
    )
    """The spans the task made, or why they were not recorded; read them by `span_tree`."""
    attributes: Mapping[str, JsonValue] = field(default_factory=dict)
    """What the task recorded with `set_eval_attribute`, by name (pydantic-evals' `attributes`)."""
    metrics: Mapping[str, int | float] = field(default_factory=dict)
    """The sums the task recorded with `increment_eval_metric` (pydantic-evals' `metrics`).

    With its spans recorded (see `span_tree`), its model requests' `requests`,
    `input_tokens`, `output_tokens`, `cost`... are added, as pydantic-evals adds
    them (see `neuron_evals._span_metrics`).
    """

    @property
    def span_tree(self) -> SpanTree:
        """The OpenTelemetry spans the task made during this case (pydantic-evals' `span_tree`).

        Recorded while neuron-tracing-otel is instrumenting (see `HasMatchingSpan`).

        Raises:
            SpanTreeRecordingError: they were not recorded; it says why.
        """
        if isinstance(self.spans, SpanTreeRecordingError):
            raise SpanTreeRecordingError(self.spans.reason)
        return self.spans

    @property
    def cost(self) -> Money | None:
        """The task's cost (USD), when it returned a `TurnOutput`."""
        return None if self.turn_output is None else self.turn_output.metadata.cost

    @property
    def exit_reason(self) -> str | None:
        """The turn's exit reason as one word (see `exit_reason_text`), if any."""
        if self.turn_output is None:
            return None
        return exit_reason_text(self.turn_output.exit_reason)

    @property
    def tools_called(self) -> list[str]:
        """The names of the tools the turn called, in order (empty without a `TurnOutput`)."""
        if self.turn_output is None:
            return []
        return [record.name for record in self.turn_output.metadata.tools_called]

    def record_cost(self, cost: Money) -> None:
        """Add what an evaluator spent (its own model calls) to this case's evaluator cost."""
        self.evaluator_costs.append(cost)
