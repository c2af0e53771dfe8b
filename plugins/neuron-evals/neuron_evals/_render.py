"""A report as a plain-text table (private: `EvaluationReport.render` calls it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Final

from moneyed import Money

from layer0 import usd

from ._json import as_text
from .report_case import EvaluationResult, EvaluatorFailure, ReportCase
from .summary import ReportSummary, summarize

_GAP: Final = "  "
_DETAIL_WIDTH: Final = 120
_ARROW: Final = " -> "
# Columns that are left out when no case has anything to show in them.
_OPTIONAL: Final = frozenset(
    {"Scores", "Labels", "Metrics", "Attributes", "Exit", "Cost", "Tokens"}
)


_CONTROLS: Final = (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))
_WRITTEN_OUT: Final = str.maketrans(
    {code: f"\\x{code:02x}" for code in _CONTROLS}
    | {code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)}
)
"""Each control character as its escape: a report is printed to terminals, and a model's
output holding ESC sequences would clear the screen or rewrite the lines above; and each
lone surrogate (a model's broken escape), which no terminal or file takes as UTF-8."""


def cut(text: str, width: int) -> str:
    """`text` on one line, its control characters written out, cut to `width` characters."""
    line = " ".join(text.split()).translate(_WRITTEN_OUT)
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def money(amount: Money | None) -> str:
    """`$0.0012`; `-` for None."""
    if amount is None:
        return "-"
    value: Decimal = amount.amount
    return "$0" if value == 0 else "$" + format(value.normalize(), "f")


def seconds(value: float) -> str:
    """`15ms` under a second, `1.23s` from one up."""
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"


def number(value: float) -> str:
    """A score with two decimals."""
    return f"{value:.2f}"


def metric(value: float) -> str:
    """A metric as it is: `3`, `0.25`, `0.000312`; six significant digits at most."""
    return str(value) if isinstance(value, int) else f"{value:.6g}"


def _signed(value: float, show: Callable[[float], str]) -> str:
    return ("+" if value >= 0 else "-") + show(abs(value))


def _result(case: ReportCase) -> str:
    if case.task_error is not None:
        return "ERROR"
    return "pass" if case.passed else "FAIL"


def _assertions(case: ReportCase) -> str:
    total = case.assertions_total
    return f"{case.assertions_passed}/{total}" if total else "-"


def _named(values: dict[str, str]) -> str:
    return ", ".join(f"{name}={value}" for name, value in values.items()) or "-"


def _scores(case: ReportCase) -> dict[str, float]:
    return {name: float(result.value) for name, result in case.scores.items()}


def _metrics(case: ReportCase) -> dict[str, float]:
    return dict(case.metrics)


def _attributes(case: ReportCase) -> str:
    return _named({name: as_text(value) for name, value in case.attributes.items()})


def _tokens(case: ReportCase) -> str:
    if case.tokens_in is None or case.tokens_out is None:
        return "-"
    return f"{case.tokens_in}/{case.tokens_out}"


def _output(case: ReportCase) -> str:
    if case.task_error is not None:
        return f"{case.task_error.error_type}: {case.task_error.message}"
    return case.output_text


def _cells(case: ReportCase, before: ReportCase | None, new: bool) -> dict[str, str]:
    """The row of `case`; with `before`, each changed cell shows the change."""
    cells = {
        "Case": case.name,
        "Result": ("new: " if new else "") + _result(case),
        "Assertions": _assertions(case),
        "Scores": _named({name: number(value) for name, value in _scores(case).items()}),
        "Labels": _named({name: str(result.value) for name, result in case.labels.items()}),
        "Metrics": _named({name: metric(value) for name, value in _metrics(case).items()}),
        "Attributes": _attributes(case),
        "Exit": case.exit_reason or "-",
        "Cost": money(case.cost),
        "Tokens": _tokens(case),
        "Duration": seconds(case.duration),
        "Output": _output(case),
    }
    if before is None:
        return cells
    for column in ("Result", "Assertions", "Attributes", "Exit", "Tokens"):
        old = _cells(before, None, False)[column]
        if old != cells[column]:
            cells[column] = old + _ARROW + cells[column]
    cells["Scores"] = _score_changes(_scores(before), _scores(case))
    cells["Metrics"] = _score_changes(_metrics(before), _metrics(case), metric)
    cells["Cost"] = _cost_change(before.cost, case.cost)
    delta = case.duration - before.duration
    cells["Duration"] = (
        f"{seconds(before.duration)}{_ARROW}{seconds(case.duration)} ({_signed(delta, seconds)})"
    )
    return cells


def _score_changes(
    before: Mapping[str, float], after: Mapping[str, float], show: Callable[[float], str] = number
) -> str:
    """Each value by name, before and after (a score's two decimals, or as `show` shows it)."""
    shown: dict[str, str] = {}
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            shown[name] = (
                (show(old) if old is not None else "-")
                + _ARROW
                + (show(new) if new is not None else "-")
            )
        else:
            shown[name] = _number_change(old, new, show)
    return _named(shown)


def _number_change(old: float, new: float, show: Callable[[float], str] = number) -> str:
    """`0.50 -> 0.80 (+0.30)`; just `0.80` when it did not change."""
    if old == new:
        return show(new)
    return f"{show(old)}{_ARROW}{show(new)} ({_signed(new - old, show)})"


def _cost_change(before: Money | None, after: Money | None) -> str:
    if before == after or before is None or after is None:
        return money(after) if before == after else money(before) + _ARROW + money(after)
    delta = after - before
    sign = "+" if delta.amount >= 0 else "-"
    return f"{money(before)}{_ARROW}{money(after)} ({sign}{money(abs(delta))})"


def _table(rows: Sequence[dict[str, str]], width: int) -> list[str]:
    if not rows:
        return ["(no cases)"]
    columns = [
        column
        for column in rows[0]
        if column not in _OPTIONAL or any(row[column] != "-" for row in rows)
    ]
    shown = [[cut(row[column], width) for column in columns] for row in rows]
    widths = [max(len(column), *(len(row[i]) for row in shown)) for i, column in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return _GAP.join(
            cell.ljust(size) for cell, size in zip(cells, widths, strict=True)
        ).rstrip()

    return [line(columns), line(["-" * size for size in widths]), *(line(row) for row in shown)]


def _details(cases: Sequence[ReportCase]) -> list[str]:
    lines: list[str] = []
    for case in cases:
        if case.task_error is not None:
            error = case.task_error
            lines.append(f"{case.name}: the task raised {error.error_type}: {error.message}")
        for result in case.assertions.values():
            if result.value is not True:
                lines.append(
                    f"{case.name}: {result.name} failed"
                    + (f": {result.reason}" if result.reason else "")
                )
        for failure in case.evaluator_failures:
            lines.append(
                f"{case.name}: {failure.name} raised {failure.error_type}: {failure.message}"
            )
    return ["", "Failures:", *("  " + cut(line, _DETAIL_WIDTH) for line in lines)] if lines else []


def _rate(passed: int, total: int) -> str:
    return f"{passed}/{total} ({100 * passed / total:.1f}%)" if total else "0/0"


def _totals(summary: ReportSummary, earlier: ReportSummary | None) -> list[str]:
    cases = _rate(summary.passed, summary.cases)
    if earlier is not None:
        cases += f", was {_rate(earlier.passed, earlier.cases)}"
    assertions = _rate(summary.assertions_passed, summary.assertions_total)
    lines = [f"Cases passed: {cases}; assertions passed: {assertions}"]
    if summary.errors:
        lines.append(f"Task errors: {summary.errors}")
    if summary.mean_scores or (earlier is not None and earlier.mean_scores):
        scores = (
            _named({name: number(value) for name, value in summary.mean_scores.items()})
            if earlier is None
            else _score_changes(earlier.mean_scores, summary.mean_scores)
        )
        lines.append(f"Mean scores: {scores}")
    if summary.mean_metrics or (earlier is not None and earlier.mean_metrics):
        metrics = (
            _named({name: metric(value) for name, value in summary.mean_metrics.items()})
            if earlier is None
            else _score_changes(earlier.mean_metrics, summary.mean_metrics, metric)
        )
        lines.append(f"Mean metrics: {metrics}")
    cost = (
        money(summary.total_cost)
        if earlier is None
        else _cost_change(earlier.total_cost, summary.total_cost)
    )
    if summary.evaluator_cost.amount:
        cost += f" (evaluators: {money(summary.evaluator_cost)})"
    lines.append(f"Cost: {cost}")
    if summary.tokens_in or summary.tokens_out:
        lines.append(f"Tokens: {summary.tokens_in} in, {summary.tokens_out} out")
    lines.append(
        f"Duration: {seconds(summary.total_duration)} in all, "
        f"{seconds(summary.mean_duration)} a case"
    )
    return lines


def _repeated(cases: Sequence[ReportCase]) -> list[str]:
    """Per case run more than once, its aggregate over the runs."""
    groups: dict[str, list[ReportCase]] = {}
    for case in cases:
        if case.source_case is not None:
            groups.setdefault(case.source_case, []).append(case)
    lines: list[str] = []
    for name, runs in groups.items():
        summary = summarize(runs)
        parts = [
            f"{summary.cases} runs",
            f"passed {_rate(summary.passed, summary.cases)}",
            f"assertions {_rate(summary.assertions_passed, summary.assertions_total)}",
        ]
        if summary.mean_scores:
            scores = {key: number(value) for key, value in summary.mean_scores.items()}
            parts.append(f"mean scores {_named(scores)}")
        if summary.mean_metrics:
            metrics = {key: metric(value) for key, value in summary.mean_metrics.items()}
            parts.append(f"mean metrics {_named(metrics)}")
        costs = [run.cost for run in runs if run.cost is not None]
        if costs:
            parts.append(f"mean cost {money(usd(summary.total_cost.amount / len(costs)))}")
        parts.append(f"mean duration {seconds(summary.mean_duration)}")
        lines.append(f"  {name}: " + "; ".join(parts))
    return ["", "Across runs:", *lines] if lines else []


def _analyses(
    analyses: tuple[Mapping[str, EvaluationResult], Sequence[EvaluatorFailure]],
    earlier: Mapping[str, EvaluationResult] | None,
) -> list[str]:
    """The report evaluators' results (against `earlier`'s), then those that raised."""
    results, failures = analyses
    lines: list[str] = []
    for result in results.values():
        value = result.value
        shown = number(value) if isinstance(value, float) else str(value)
        before = None if earlier is None else earlier.get(result.name)
        if before is not None and before.value != value:
            old = before.value
            numbers = [item for item in (old, value) if not isinstance(item, bool | str)]
            shown = (
                _number_change(float(old), float(value))
                if len(numbers) == 2
                else f"{old}{_ARROW}{shown}"
            )
        lines.append(f"{result.name}: {shown}" + (f" ({result.reason})" if result.reason else ""))
    for failure in failures:
        lines.append(f"{failure.name} raised {failure.error_type}: {failure.message}")
    shown_lines = ("  " + cut(line, _DETAIL_WIDTH) for line in lines)
    return ["", "Report evaluators:", *shown_lines] if lines else []


def render_report(
    name: str,
    cases: Sequence[ReportCase],
    *,
    baseline: tuple[str, Sequence[ReportCase]] | None,
    width: int,
    analyses: tuple[Mapping[str, EvaluationResult], Sequence[EvaluatorFailure]] = ({}, ()),
    earlier_analyses: Mapping[str, EvaluationResult] | None = None,
) -> str:
    """The table, the failures, the totals and the report evaluators of a run.

    Against a `(name, cases)` baseline, and its analyses, each shows the change.
    """
    before = [] if baseline is None else list(baseline[1])
    earlier = {case.name: case for case in before}
    rows = [
        _cells(case, earlier.get(case.name), baseline is not None and case.name not in earlier)
        for case in cases
    ]
    title = f"Evaluation: {name}"
    if baseline is not None:
        title += f" (against {baseline[0]})"
    lines = [title, "", *_table(rows, width)]
    names = {case.name for case in cases}
    removed = [case.name for case in before if case.name not in names]
    if removed:
        lines += ["", "Removed: " + ", ".join(removed)]
    lines += _repeated(cases)
    lines += _details(cases)
    lines += ["", *_totals(summarize(cases), None if baseline is None else summarize(before))]
    lines += _analyses(analyses, earlier_analyses)
    return "\n".join(lines) + "\n"
