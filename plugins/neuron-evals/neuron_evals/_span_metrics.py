"""A case's model requests, tokens and cost, summed from its task's spans (private).

pydantic-evals' metrics from spans (`extract_span_tree_metrics` in
`pydantic_evals`): when a case's spans were recorded (`ctx.span_tree` is
there), each model request span among them adds 1 to the metric `requests`
and its usage to metrics of the usage's names, and the case's `metrics` hold
the sums, beside (and added to) what its task recorded with
`increment_eval_metric`. With neuron-tracing-otel's spans, the metrics are:

- `requests`: one per `chat {model}` span (`gen_ai.operation.name` `chat`);
- `input_tokens`, `output_tokens`: `gen_ai.usage.input_tokens`, `output_tokens`;
- `cache_read_tokens`, `cache_write_tokens`: `gen_ai.usage.cache_read.input_tokens`
  and `gen_ai.usage.cache_creation.input_tokens`, under the names pydantic-ai
  gives them (`gen_ai.usage.details.cache_read_tokens`...), so a metric means
  the same in both;
- `cost`: `neuron.cost.usd` (pydantic-ai's spans: `operation.cost`), in USD.

Any other `gen_ai.usage.details.{name}` or `gen_ai.usage.{name}` number of a
request span (another instrumentation's) is summed as `{name}`, as
pydantic-evals does. A model request of a sub-agent the task ran (a tool that
runs a turn) is the task's too: its spans are under the task's.

Where this differs from pydantic-evals, and why:

- A request span is one whose operation is `chat`; pydantic-evals takes any
  span with `gen_ai.request.model`. Our `invoke_agent` span has that attribute
  too, with the turn's totals (counting it would count each request twice),
  and a `chat` span has none when the turn names no model.
- A request span under another one is not counted: it is the same request
  seen by a second instrumentation (an SDK's own GenAI spans, under ours,
  which is current while the provider is called).
- `cost` is summed in decimal, then made a float once (a metric is an int or a
  float): `0.1 + 0.2` is `0.3`, not `0.30000000000000004`. The report's exact
  cost of a turn stays `ReportCase.cost`, from its `TurnOutput`.
- A bool, and a number that is not finite, is no amount (`increment_eval_metric`
  refuses them) and is skipped.
- As for pydantic-evals, nothing is derived when the task raised (the case
  keeps what the task recorded), nor without recorded spans; spans past
  `MAX_CASE_SPANS` (`SpanTree.dropped`) are not counted. There is no
  `tool_calls` metric: pydantic-evals derives none (`tools_called` has them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Final

from .errors import SpanTreeRecordingError
from .span_tree import AttributeValue, SpanNode, SpanTree
from .task_record import TaskRecord

__all__ = ["is_model_request", "record_span_metrics", "span_metrics"]

_OPERATION: Final = "gen_ai.operation.name"
_CHAT: Final = "chat"
_DETAILS: Final = "gen_ai.usage.details."
_USAGE: Final = "gen_ai.usage."
_RENAMED: Final = {
    "gen_ai.usage.cache_read.input_tokens": "cache_read_tokens",
    "gen_ai.usage.cache_creation.input_tokens": "cache_write_tokens",
}
_COSTS: Final = ("neuron.cost.usd", "operation.cost")
"""Where a request span holds its cost in USD: ours, else pydantic-ai's (Logfire's)."""


def is_model_request(node: SpanNode) -> bool:
    """Whether `node` is one model request: its `gen_ai.operation.name` is `chat`."""
    return node.attributes.get(_OPERATION) == _CHAT


def span_metrics(tree: SpanTree) -> dict[str, int | float]:
    """The metrics the model requests among `tree`'s spans sum to (see the module's docs).

    `requests` first, then the usage in the order first seen, then `cost`;
    a sum of 0 is left out, as pydantic-evals never records a metric only
    incremented by 0.
    """
    sums: dict[str, int | float] = {}
    cost = Decimal(0)
    for node in _counted(tree):
        _add(sums, "requests", 1)
        for key, value in node.attributes.items():
            name = _usage_name(key)
            amount = _amount(value)
            if name is not None and amount is not None:
                _add(sums, name, amount)
        cost += _cost(node)
    if cost:
        sums["cost"] = float(cost)
    return {name: total for name, total in sums.items() if total != 0}


def record_span_metrics(record: TaskRecord, spans: SpanTree | SpanTreeRecordingError) -> None:
    """Add the metrics of `spans` to what the task recorded in `record`; nothing unrecorded.

    Added after the task ran, as pydantic-evals does: a metric the task also
    incremented itself is the sum of both.

    Raises:
        EvalRecordError: a sum overflows (as the task's own increment would).
    """
    if isinstance(spans, SpanTreeRecordingError):
        return
    for name, amount in span_metrics(spans).items():
        record.increment_metric(name, amount)


def _counted(tree: SpanTree) -> Iterable[SpanNode]:
    """The request spans of `tree` not under another request span."""
    for node in tree:
        if is_model_request(node) and not node.any_ancestor(is_model_request):
            yield node


def _usage_name(key: str) -> str | None:
    """The metric an attribute of a request span adds to, None for one that is no usage."""
    if key in _RENAMED:
        return _RENAMED[key]
    for prefix in (_DETAILS, _USAGE):
        if key.startswith(prefix):
            return key.removeprefix(prefix)
    return None


def _amount(value: AttributeValue) -> int | float | None:
    """`value` as an amount to sum: an int, a finite float; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _cost(node: SpanNode) -> Decimal:
    """The request's cost in USD, from the first cost attribute it has; 0 without one."""
    for key in _COSTS:
        amount = _amount(node.attributes[key]) if key in node.attributes else None
        if amount is not None:
            # repr gives the shortest decimal that reads back as the same float:
            # the amount the tracing plugin converted from its Decimal.
            return Decimal(repr(amount))
    return Decimal(0)


def _add(sums: dict[str, int | float], name: str, amount: int | float) -> None:
    sums[name] = sums.get(name, 0) + amount
