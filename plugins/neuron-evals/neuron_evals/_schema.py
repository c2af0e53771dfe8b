"""The JSON Schema of dataset files, with the evaluators they may name (private).

An editor (through the `# yaml-language-server: $schema=...` line, or a JSON
file's `$schema` key) then completes and checks a file as `from_file` reads
it: each evaluator in the short forms `_spec.build` accepts, `Name`,
`{Name: first_argument}` and `{Name: {argument: value}}`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from layer0 import TurnInput

from ._arguments import MODE, Shape, shape_of
from ._spec import BUILT_IN, BUILT_IN_REPORT, CustomEvaluator, registry, report_registry
from .errors import EvaluatorSpecError
from .evaluator import Evaluator, FunctionEvaluator
from .report_evaluator import ReportEvaluator

__all__ = ["custom_evaluators_of", "dataset_schema"]

DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
CASE_DEF: Final = "dataset_case"
EVALUATOR_DEF: Final = "case_evaluator"
REPORT_EVALUATOR_DEF: Final = "report_evaluator"
_REFS: Final = "#/$defs/{model}"


def _one_key(name: str, value: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: value},
        "required": [name],
        "additionalProperties": False,
        "description": description,
    }


def _forms(shape: Shape, schemas: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    """The schemas of the forms naming `shape`: `Name`, `{Name: first}`, `{Name: {...}}`."""
    forms: list[dict[str, Any]] = []
    if not any(argument.required for argument in shape.arguments):
        forms.append({"const": shape.name, "description": shape.description})
    if shape.first is not None:
        # `build` reads a mapping as the arguments by name, never as the first one;
        # null is the first argument None, where the argument takes it.
        first = {"allOf": [schemas[(shape.name, shape.first)], {"not": {"type": "object"}}]}
        forms.append(_one_key(shape.name, first, shape.description))
    by_name: dict[str, Any] = {
        "type": "object",
        "properties": {a.name: schemas[(shape.name, a.name)] for a in shape.arguments},
        "additionalProperties": False,
    }
    if any(a.required for a in shape.arguments):
        by_name["required"] = [a.name for a in shape.arguments if a.required]
    forms.append(_one_key(shape.name, by_name, shape.description))
    return forms


def _split(
    custom: Sequence[CustomEvaluator],
) -> tuple[list[type[Evaluator] | FunctionEvaluator], list[type[ReportEvaluator]]]:
    """`custom`'s evaluators of cases and of reports.

    Raises:
        TypeError: an item is none of an `Evaluator` class, an `@evaluator`
            function or a `ReportEvaluator` class.
    """
    cases: list[type[Evaluator] | FunctionEvaluator] = []
    reports: list[type[ReportEvaluator]] = []
    for index, item in enumerate(custom):
        if isinstance(item, FunctionEvaluator):
            cases.append(item)
        elif isinstance(item, type) and issubclass(item, ReportEvaluator):
            reports.append(item)
        elif isinstance(item, type) and issubclass(item, Evaluator):
            cases.append(item)
        else:
            raise TypeError(
                f"custom_evaluators[{index}] is {item!r}; give Evaluator or ReportEvaluator "
                "classes, or functions made evaluators with @evaluator"
            )
    return cases, reports


def dataset_schema(custom: Sequence[CustomEvaluator] = ()) -> dict[str, Any]:
    """The JSON Schema of a dataset file naming the stock evaluators and `custom`.

    Raises:
        TypeError: an item of `custom` is no evaluator class or `@evaluator` function.
        ValueError: two evaluators share a name.
        EvaluatorSpecError: a custom evaluator cannot go in a dataset file.
    """
    custom_cases, custom_reports = _split(custom)
    registry(custom)  # raises on a name taken twice
    report_registry(custom)
    cases = [shape_of(kind) for kind in (*BUILT_IN, *custom_cases)]
    reports = [shape_of(kind) for kind in (*BUILT_IN_REPORT, *custom_reports)]
    inputs: list[tuple[tuple[str, str], JsonSchemaMode, TypeAdapter[Any]]] = [
        ((shape.name, argument.name), MODE, TypeAdapter(argument.hint))
        for shape in (*cases, *reports)
        for argument in shape.arguments
    ]
    found, defs = TypeAdapter.json_schemas(
        [*inputs, (("", "inputs"), MODE, TypeAdapter(TurnInput))], ref_template=_REFS
    )
    schemas = {key: schema for (key, _), schema in found.items()}
    taken = {CASE_DEF, EVALUATOR_DEF, REPORT_EVALUATOR_DEF} & set(defs.get("$defs", {}))
    if taken:
        raise EvaluatorSpecError(f"a field's type is named {sorted(taken)[0]!r}; rename it")
    return {
        "$schema": DRAFT,
        "title": "neuron-evals dataset file",
        "type": "object",
        "properties": {
            "$schema": {"type": "string", "description": "This schema's address (ignored)."},
            "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "cases": {"type": "array", "items": {"$ref": f"#/$defs/{CASE_DEF}"}},
            "evaluators": _list(EVALUATOR_DEF),
            "report_evaluators": _list(REPORT_EVALUATOR_DEF),
        },
        "required": ["cases"],
        "additionalProperties": False,
        "$defs": {
            **defs.get("$defs", {}),
            CASE_DEF: _case(schemas[("", "inputs")]),
            EVALUATOR_DEF: {"anyOf": [f for shape in cases for f in _forms(shape, schemas)]},
            REPORT_EVALUATOR_DEF: {
                "anyOf": [f for shape in reports for f in _forms(shape, schemas)]
            },
        },
    }


def _list(definition: str) -> dict[str, Any]:
    return {"type": "array", "items": {"$ref": f"#/$defs/{definition}"}}


def _case(turn_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "inputs": {"anyOf": [{"type": "string"}, turn_input]},
            "expected_output": {},
            "metadata": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            "evaluators": _list(EVALUATOR_DEF),
        },
        "required": ["name", "inputs"],
        "additionalProperties": False,
    }


def custom_evaluators_of(
    evaluators: Iterable[Evaluator | ReportEvaluator],
) -> list[CustomEvaluator]:
    """The custom evaluators among `evaluators`: their classes, or the `@evaluator` functions.

    Each once, in the order first met; the stock ones are left out.
    """
    stock: set[type] = {*BUILT_IN, *BUILT_IN_REPORT}
    found: list[CustomEvaluator] = []
    for evaluator in evaluators:
        kind: CustomEvaluator = (
            evaluator if isinstance(evaluator, FunctionEvaluator) else type(evaluator)
        )
        if kind not in stock and not any(kind is known for known in found):
            found.append(kind)
    return found
