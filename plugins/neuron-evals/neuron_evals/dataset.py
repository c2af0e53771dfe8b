"""`Dataset`: cases and evaluators, run against a task into an `EvaluationReport`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._files import dataset_text, read_dataset, write_whole
from ._run import Task, run_case, task_name
from ._run_spans import RunSpans
from ._run_tracing import run_spans
from ._schema import custom_evaluators_of, dataset_schema
from ._spec import CustomEvaluator
from .case import Case
from .errors import DatasetFileError, DuplicateCaseError, EvalsError
from .evaluator import Evaluator
from .report import EvaluationReport
from .report_case import ReportCase
from .report_evaluator import ReportEvaluator, run_report_evaluators
from .task_record import increment_eval_metric, set_eval_attribute

# The two recording functions are here too, where pydantic-evals has them
# (`pydantic_evals.dataset.set_eval_attribute`), so its imports read the same.
__all__ = ["Dataset", "increment_eval_metric", "set_eval_attribute"]


def _report_evaluators(given: Sequence[ReportEvaluator]) -> tuple[ReportEvaluator, ...]:
    """`given` as a tuple, each checked to be a report evaluator instance.

    Raises:
        TypeError: one is not (a class not instantiated, a case's `Evaluator`, a name).
    """
    if isinstance(given, str | ReportEvaluator):
        raise TypeError(f"report_evaluators must be a sequence of ReportEvaluator, got {given!r}")
    items: Sequence[object] = given  # a caller without mypy can pass anything
    for index, item in enumerate(items):
        if isinstance(item, ReportEvaluator):
            continue
        if isinstance(item, type):
            kind = f"the class {item.__name__} (an instance is needed: {item.__name__}(...))"
        elif isinstance(item, Evaluator):
            kind = f"{item!r}, an evaluator of cases (give it to evaluators=)"
        else:
            kind = repr(item)
        raise TypeError(f"report_evaluators[{index}] is {kind}, not a ReportEvaluator")
    return tuple(given)


class Dataset:
    """Cases to run a task on, and the evaluators every case gets, as pydantic-evals' `Dataset`.

    The task is any `layer0.Turn` (a `NeuronTurn`, an orchestrator's dispatch
    wrapped as one, a `FallbackTurn`), or an async function of a case's inputs
    returning a `TurnOutput` or any answer.
    """

    def __init__(
        self,
        cases: Sequence[Case],
        *,
        evaluators: Sequence[Evaluator] = (),
        name: str | None = None,
        report_evaluators: Sequence[ReportEvaluator] = (),
    ) -> None:
        """Create a dataset; `report_evaluators` judge each run's whole report.

        Raises:
            DuplicateCaseError: two cases share a name.
            TypeError: an item of `report_evaluators` is no `ReportEvaluator` instance.
        """
        seen: set[str] = set()
        for case in cases:
            if case.name in seen:
                raise DuplicateCaseError(case.name)
            seen.add(case.name)
        self.cases: tuple[Case, ...] = tuple(cases)
        self.evaluators: tuple[Evaluator, ...] = tuple(evaluators)
        self.name = name
        self.report_evaluators = _report_evaluators(report_evaluators)

    def add_case(self, case: Case) -> None:
        """Add `case` at the end.

        Raises:
            DuplicateCaseError: a case of that name is already there.
        """
        if any(known.name == case.name for known in self.cases):
            raise DuplicateCaseError(case.name)
        self.cases = (*self.cases, case)

    def add_evaluator(self, evaluator: Evaluator, *, specific_case: str | None = None) -> None:
        """Add `evaluator` for every case, or only for the case named `specific_case`.

        Raises:
            LookupError: no case has the name `specific_case`.
        """
        if specific_case is None:
            self.evaluators = (*self.evaluators, evaluator)
            return
        for index, case in enumerate(self.cases):
            if case.name == specific_case:
                changed = Case(
                    case.name,
                    case.inputs,
                    case.expected_output,
                    case.metadata,
                    (*case.evaluators, evaluator),
                )
                self.cases = (*self.cases[:index], changed, *self.cases[index + 1 :])
                return
        raise LookupError(f"no case named {specific_case!r}")

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, cases={len(self.cases)})"

    @classmethod
    def from_file(
        cls, path: str | Path, *, custom_evaluators: Sequence[CustomEvaluator] = ()
    ) -> Dataset:
        """Read a dataset from a YAML (`.yaml`, `.yml`) or JSON (`.json`) file.

        Evaluators are named as `Name`, `{Name: first_argument}` or
        `{Name: {argument: value}}`; the names are the built-in evaluators' and
        those of `custom_evaluators` (evaluator classes, or `@evaluator` functions).
        Report evaluators (`report_evaluators:`) are named the same way; the
        names are the stock ones' and the `ReportEvaluator` classes there.
        An evaluator's arguments are checked against its fields: an unknown
        one, or one of the wrong type, is refused. A `$schema` key (written by
        `to_file(schema_path=...)` for editors) is ignored.

        Raises:
            DatasetFileError: the file cannot be read, or is invalid anywhere
                (the message names the file, the case and the field); no
                partial dataset is ever returned.
        """
        name, cases, evaluators, report_evaluators = read_dataset(Path(path), custom_evaluators)
        return cls(cases, evaluators=evaluators, name=name, report_evaluators=report_evaluators)

    @classmethod
    def json_schema(cls, *, custom_evaluators: Sequence[CustomEvaluator] = ()) -> dict[str, Any]:
        """The JSON Schema of dataset files, naming the stock evaluators and `custom_evaluators`.

        Editors check and complete a file with it (pydantic-evals'
        `model_json_schema_with_evaluators`). It holds each evaluator in the
        forms `from_file` reads: `Name` (when no argument is required),
        `{Name: first_argument}` and `{Name: {argument: value}}`; the same for
        report evaluators. `custom_evaluators` are as `from_file` takes them.
        A field whose type has no JSON Schema (`LLMJudge`'s `provider`) is left
        out, as files never hold it.

        Raises:
            TypeError: an item of `custom_evaluators` is no evaluator class or
                `@evaluator` function.
            ValueError: two evaluators share a name.
            EvaluatorSpecError: a custom evaluator cannot go in a file (a
                required field of a type with no JSON form, or unresolvable).
        """
        return dataset_schema(custom_evaluators)

    def to_file(
        self,
        path: str | Path,
        *,
        schema_path: str | Path | None = None,
        custom_evaluators: Sequence[CustomEvaluator] = (),
    ) -> None:
        """Write the dataset to a YAML or JSON file, by the suffix of `path`.

        With `schema_path` (relative to the file's folder unless absolute), the
        file's JSON Schema is written there too, as pydantic-evals does: it
        names the dataset's own custom evaluators and `custom_evaluators`.
        The file then points at it, relatively: a JSON file by its `$schema`
        key, a YAML one by a first line `# yaml-language-server: $schema=...`.
        Nothing is written when anything is wrong, and each file is written
        whole or not at all (a full disk midway leaves the old one as it was).

        Raises:
            DatasetFileError: an unknown suffix, an evaluator that holds a
                Python object with no form in a file (`ValidatesAs`), two
                evaluators of one name, `schema_path` is `path` itself, or a
                file cannot be written (its folder is missing, it is read-only).
        """
        path = Path(path)
        if schema_path is None:
            write_whole(path, self._text(path))
            return
        schema_file = path.parent / schema_path
        if schema_file.resolve() == path.resolve():
            raise DatasetFileError(path, "schema_path is the dataset file itself")
        text = self._text(path, os.path.relpath(schema_file, path.parent).replace(os.sep, "/"))
        own = custom_evaluators_of(
            [
                *self.evaluators,
                *(evaluator for case in self.cases for evaluator in case.evaluators),
                *self.report_evaluators,
            ]
        )
        custom = [
            *custom_evaluators,
            *(k for k in own if not any(k is c for c in custom_evaluators)),
        ]
        try:
            schema = dataset_schema(custom)
        except (EvalsError, ValueError) as exc:
            raise DatasetFileError(schema_file, str(exc)) from exc
        write_whole(schema_file, json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
        write_whole(path, text)

    def _text(self, path: Path, schema_ref: str | None = None) -> str:
        return dataset_text(
            path,
            self.name,
            self.cases,
            self.evaluators,
            self.report_evaluators,
            schema_ref=schema_ref,
        )

    async def evaluate(
        self,
        task: Task,
        *,
        name: str | None = None,
        max_concurrency: int | None = None,
        repeat: int = 1,
        report_evaluators: Sequence[ReportEvaluator] = (),
    ) -> EvaluationReport:
        """Run `task` on every case, then the evaluators, and report.

        At most `max_concurrency` cases run at once (None: all). A task or an
        evaluator that raises is recorded for its case; the others go on.
        Cancelling the run (Ctrl-C) cancels the running cases and propagates.
        With `repeat` above 1 each case runs that many times, each run its own
        `ReportCase` named `case [i/n]`, as pydantic-evals names them; the
        report then shows each case's aggregate over its runs.
        The dataset's report evaluators then judge the whole report, and after
        them `report_evaluators`, given for this run only; what they find, or
        raise, is in its `analyses` and `analysis_failures`.

        Raises:
            ValueError: `max_concurrency` or `repeat` is below 1.
            TypeError: an item of `report_evaluators` is no `ReportEvaluator`
                instance (checked before any case runs).
        """
        extra = _report_evaluators(report_evaluators)
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if repeat < 1:
            raise ValueError(f"repeat must be at least 1, got {repeat}")
        spans = run_spans()
        run_name = name or self.name or task_name(task)
        with spans.dataset(
            run_name,
            task_name=task_name(task),
            dataset_name=self.name,
            cases=len(self.cases),
            repeat=repeat,
        ) as span:
            start = time.perf_counter()
            cases = await self._run_cases(task, spans, max_concurrency, repeat)
            report = EvaluationReport(
                name=run_name, cases=cases, duration=time.perf_counter() - start
            )
            judged = await run_report_evaluators(
                report, [*self.report_evaluators, *extra], self.name
            )
            span.finish(judged)
        return judged

    async def _run_cases(
        self, task: Task, spans: RunSpans, max_concurrency: int | None, repeat: int
    ) -> list[ReportCase]:
        """Every case's runs, at most `max_concurrency` at once, in the dataset's order."""
        limit = (
            asyncio.Semaphore(max_concurrency)
            if max_concurrency is not None
            else contextlib.nullcontext()
        )

        async def one(case: Case, run: int) -> ReportCase:
            label = case.name if repeat == 1 else f"{case.name} [{run}/{repeat}]"
            async with limit:
                evaluators = [*self.evaluators, *case.evaluators]
                done = await run_case(task, case, evaluators, spans=spans, name=label)
            if repeat == 1:
                return done
            return done.model_copy(update={"name": label, "source_case": case.name, "run": run})

        async with asyncio.TaskGroup() as group:
            running = [
                group.create_task(one(case, run))
                for case in self.cases
                for run in range(1, repeat + 1)
            ]
        return [done.result() for done in running]

    def evaluate_sync(
        self,
        task: Task,
        *,
        name: str | None = None,
        max_concurrency: int | None = None,
        repeat: int = 1,
        report_evaluators: Sequence[ReportEvaluator] = (),
    ) -> EvaluationReport:
        """Run `evaluate` to its end, for a script; not from inside a running event loop.

        Raises:
            RuntimeError: called from a running event loop (await `evaluate` there).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                self.evaluate(
                    task,
                    name=name,
                    max_concurrency=max_concurrency,
                    repeat=repeat,
                    report_evaluators=report_evaluators,
                )
            )
        raise RuntimeError("evaluate_sync cannot run inside an event loop; await evaluate()")
