"""The JSON Schema of dataset files: what it accepts is what `from_file` reads, `to_file`
writes it beside the file and points at it, and a misspelt name fails both, named."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
import yaml
from neuron_evals import (
    Accuracy,
    Case,
    Dataset,
    DatasetFileError,
    EqualsExpected,
    EvaluatorContext,
    EvaluatorOutput,
    EvaluatorSpecError,
    LLMJudge,
    ReportEvaluator,
    ReportEvaluatorContext,
    ValidatesAs,
)
from neuron_evals._files import _CaseFile, _DatasetFile
from neuron_evals._spec import CustomEvaluator
from neuron_evals.evaluator import Evaluator

from ._schema_check import file_data, schema_errors
from ._turns import City
from .test_files import Shorter, _dataset, polite


@dataclass(frozen=True)
class Median(ReportEvaluator):
    """A custom report evaluator with an optional argument."""

    of: str = "cost"

    async def evaluate(self, ctx: ReportEvaluatorContext) -> EvaluatorOutput:
        return 0.0


CUSTOM = (Shorter, polite, Median)


def _rich() -> Dataset:
    dataset = _dataset()
    dataset.report_evaluators = (Accuracy(evaluation_name="acc"), Median("duration"))
    return dataset


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = Dataset.json_schema(custom_evaluators=CUSTOM)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_has_the_keys_from_file_reads() -> None:
    schema = Dataset.json_schema()
    file_keys = {field.alias or name for name, field in _DatasetFile.model_fields.items()}
    case_keys = set(_CaseFile.model_fields)
    assert set(schema["properties"]) == file_keys
    assert set(schema["$defs"]["dataset_case"]["properties"]) == case_keys
    assert schema["required"] == ["cases"]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_to_file_writes_the_schema_beside_the_file_and_points_at_it(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"geography{suffix}"
    _rich().to_file(path, schema_path="geography_schema.json")
    schema = json.loads((tmp_path / "geography_schema.json").read_text(encoding="utf-8"))
    assert schema == Dataset.json_schema(custom_evaluators=CUSTOM)
    text = path.read_text(encoding="utf-8")
    if suffix == ".yaml":
        assert text.startswith("# yaml-language-server: $schema=geography_schema.json\nname: ")
    else:
        assert list(json.loads(text))[:2] == ["$schema", "name"]
        assert json.loads(text)["$schema"] == "geography_schema.json"
    assert schema_errors(file_data(path), CUSTOM) == []
    again = Dataset.from_file(path, custom_evaluators=CUSTOM)
    assert again.report_evaluators == (Accuracy(evaluation_name="acc"), Median("duration"))


def test_a_schema_path_elsewhere_is_pointed_at_relatively(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "schemas").mkdir()
    path = tmp_path / "data" / "d.json"
    Dataset([Case("a", "x")]).to_file(path, schema_path=tmp_path / "schemas" / "d.json")
    assert json.loads(path.read_text(encoding="utf-8"))["$schema"] == "../schemas/d.json"
    assert (tmp_path / "schemas" / "d.json").is_file()


def test_custom_evaluators_given_to_to_file_are_in_the_schema_too(tmp_path: Path) -> None:
    uses_shorter = {"cases": [{"name": "a", "inputs": "x", "evaluators": [{"Shorter": 3}]}]}
    Dataset([Case("a", "x")], evaluators=[polite]).to_file(
        tmp_path / "own.yaml", schema_path="own.json"
    )
    Dataset([Case("a", "x")], evaluators=[polite]).to_file(
        tmp_path / "d.yaml", schema_path="s.json", custom_evaluators=[Shorter, polite]
    )
    own = json.loads((tmp_path / "own.json").read_text(encoding="utf-8"))
    given = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert not jsonschema.Draft202012Validator(own).is_valid(uses_shorter)
    assert jsonschema.Draft202012Validator(given).is_valid(uses_shorter)


def test_nothing_is_written_when_the_dataset_has_no_form_in_a_file(tmp_path: Path) -> None:
    dataset = Dataset([Case("a", "x")], evaluators=[ValidatesAs(City)])
    with pytest.raises(DatasetFileError, match="ValidatesAs holds a Python type"):
        dataset.to_file(tmp_path / "d.yaml", schema_path="s.json")
    assert list(tmp_path.iterdir()) == []


def test_the_schema_may_not_overwrite_the_dataset_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileError, match="schema_path is the dataset file itself"):
        Dataset([Case("a", "x")]).to_file(tmp_path / "d.json", schema_path="d.json")
    assert list(tmp_path.iterdir()) == []


def _read(
    tmp_path: Path, text: str, custom: tuple[CustomEvaluator, ...] = CUSTOM
) -> DatasetFileError | None:
    path = tmp_path / "d.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        Dataset.from_file(path, custom_evaluators=custom)
    except DatasetFileError as error:
        return error
    return None


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        ("EqualsExpected", True),
        ("{EqualsExpected: {evaluation_name: same}}", True),
        ("{Contains: paris}", True),
        ("{Contains: {value: paris, case_sensitive: false}}", True),
        ("{Contains: {value: {name: Paris}}}", True),
        ("{Contains: {name: Paris}}", False),  # a mapping is read as the arguments
        ("Contains", False),  # `value` is required
        ("{Contains: null}", True),  # `value` None: null is the first argument
        ("{Equals: null}", True),
        ("{MaxCost: null}", False),  # its first argument takes no None
        ("{Shorter: null}", False),
        ("{MaxCost: '0.05'}", True),
        ("{MaxCost: 0.05}", True),
        ("{IsInstance: 3}", False),
        ("{ExitReasonIs: {reason: complete, evaluation_name: x}}", True),
        (
            "{LLMJudge: {rubric: ok, model: 'anthropic:claude-haiku-4-5', include_input: true}}",
            True,
        ),
        ("{LLMJudge: {rubric: ok, provider: p}}", False),  # a provider never is in a file
        ("{Shorter: 20}", True),
        ("{Shorter: {limit: 20}}", True),
        ("Shorter", False),
        ("{Shorter: {limit: 20, extra: 1}}", False),
        ("polite", True),
        ("{polite: {}}", True),
        ("{polite: 1}", False),
        ("{Contains: x, Equals: x}", False),
        ("[Contains]", False),
    ],
)
def test_the_schema_accepts_an_evaluator_exactly_when_from_file_does(
    tmp_path: Path, spec: str, valid: bool
) -> None:
    text = f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n"
    assert (schema_errors(yaml.safe_load(text), CUSTOM) == []) is valid
    assert (_read(tmp_path, text) is None) is valid


@dataclass(frozen=True)
class Among(Evaluator):
    """A custom evaluator with a tuple and a float argument, as frozen dataclasses have."""

    words: tuple[str, ...]
    weight: float = 1.0

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        return ctx.output_text in self.words


class Longer(Evaluator):
    """A custom evaluator that is no dataclass: its arguments are its __init__'s typed ones."""

    def __init__(self, limit: int, *, evaluation_name: str | None = None) -> None:
        self.limit = limit
        self.evaluation_name = evaluation_name

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        return len(ctx.output_text) > self.limit


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        ("{Longer: 5}", True),
        ("{Longer: {limit: 5, evaluation_name: long}}", True),
        ("{Longer: five}", False),
        ("{Longer: {limit: 5, extra: 1}}", False),
        ("Longer", False),  # `limit` is required
    ],
)
def test_a_custom_evaluator_that_is_no_dataclass_is_checked_by_its_init(
    tmp_path: Path, spec: str, valid: bool
) -> None:
    text = f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n"
    assert (schema_errors(yaml.safe_load(text), (Longer,)) == []) is valid
    assert (_read(tmp_path, text, (Longer,)) is None) is valid


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        ("{Among: [paris, rome]}", True),  # a list is a tuple's value in a file, as in its schema
        ("{Among: {words: [paris], weight: 2}}", True),  # a whole number is a float's
        ("{Among: {words: paris}}", False),
        ("{Among: {words: [1]}}", False),
        ("{Among: {words: [paris], weight: heavy}}", False),
    ],
)
def test_arguments_are_checked_as_their_json_form_as_the_schema_does(
    tmp_path: Path, spec: str, valid: bool
) -> None:
    text = f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n"
    assert (schema_errors(yaml.safe_load(text), (Among,)) == []) is valid
    assert (_read(tmp_path, text, (Among,)) is None) is valid


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        ("Accuracy", True),
        ("{PassRate: true}", True),
        ("{PrecisionRecall: spam}", True),
        ("PrecisionRecall", False),
        ("{Median: duration}", True),
        ("Median", True),
        ("EqualsExpected", False),  # an evaluator of cases, not of reports
    ],
)
def test_the_schema_accepts_a_report_evaluator_exactly_when_from_file_does(
    tmp_path: Path, spec: str, valid: bool
) -> None:
    text = f"cases: []\nreport_evaluators: [{spec}]\n"
    assert (schema_errors(yaml.safe_load(text), CUSTOM) == []) is valid
    assert (_read(tmp_path, text) is None) is valid


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("cases:\n- name: a\n  inputs: hi\n  evaluators: [EqualsExpectd]\n", "evaluators[0]"),
        ("cases: []\nevaluators: [{Contans: paris}]\n", "evaluators[0]"),
        ("cases: []\nreport_evaluators: [Acuracy]\n", "report_evaluators[0]"),
    ],
)
def test_a_misspelt_evaluator_fails_the_schema_and_from_file_naming_it(
    tmp_path: Path, text: str, field: str
) -> None:
    misspelt = next(name for name in ("EqualsExpectd", "Contans", "Acuracy") if name in text)
    (error,) = schema_errors(yaml.safe_load(text), CUSTOM)
    assert misspelt in error
    refused = _read(tmp_path, text)
    assert refused is not None and refused.field == field
    assert f"unknown evaluator {misspelt!r}" in str(refused)


@pytest.mark.parametrize(
    ("text", "key", "known"),
    [
        ("cases: []\nevaluator: [EqualsExpected]\n", "evaluator", "$schema, name, cases"),
        ("cases:\n- {name: a, inputs: hi, expectd: 1}\n", "expectd", "name, inputs"),
    ],
)
def test_an_unknown_key_fails_the_schema_and_from_file_naming_it(
    tmp_path: Path, text: str, key: str, known: str
) -> None:
    (error,) = schema_errors(yaml.safe_load(text), CUSTOM)
    assert f"{key!r} was unexpected" in error
    refused = _read(tmp_path, text)
    assert refused is not None and refused.field == key
    assert f"unknown key {key!r}; the keys are: {known}" in str(refused)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            "{IsInstance: 3}",
            "IsInstance argument 'type_name': Input should be a valid string, got 3",
        ),
        ("{MaxCost: [1]}", "MaxCost argument 'usd': Input should be one of Decimal | str | int"),
        ("{LLMJudge: {rubric: ok, provider: p}}", "LLMJudge has no argument 'provider' a file can"),
        ("{Contains: {valu: x}}", "its arguments: value, case_sensitive, evaluation_name"),
        (
            "{LLMJudge: {rubric: ok, model: 3}}",
            "LLMJudge argument 'model': Input should be a valid string, got 3",
        ),
    ],
)
def test_a_wrong_argument_in_a_file_is_refused_naming_it(
    tmp_path: Path, spec: str, says: str
) -> None:
    refused = _read(tmp_path, f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n")
    assert refused is not None and refused.field == "evaluators[0]"
    assert says in str(refused)


def test_a_file_carrying_its_schema_address_reads(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"$schema": "s.json", "cases": [{"name": "a", "inputs": "x"}]}))
    assert [case.name for case in Dataset.from_file(path).cases] == ["a"]


def test_a_judges_provider_is_left_out_of_the_schema() -> None:
    forms = Dataset.json_schema()["$defs"]["case_evaluator"]["anyOf"]
    (by_name,) = [
        form["properties"]["LLMJudge"]
        for form in forms
        if form.get("properties", {}).get("LLMJudge", {}).get("type") == "object"
    ]
    assert "provider" not in by_name["properties"] and by_name["required"] == ["rubric"]
    assert LLMJudge.__dataclass_fields__["provider"]  # the field exists; the file has no form


def test_a_custom_evaluator_needing_a_python_object_cannot_be_in_the_schema() -> None:
    @dataclass(frozen=True)
    class Parses(Evaluator):
        parser: type

        async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
            return True

    with pytest.raises(EvaluatorSpecError, match=r"Parses\.parser is of type .* no JSON form"):
        Dataset.json_schema(custom_evaluators=[Parses])


@pytest.mark.parametrize(
    ("custom", "error", "says"),
    [
        ([Shorter(3)], TypeError, r"custom_evaluators\[0\] is Shorter\(limit=3\); give"),
        ([EqualsExpected], ValueError, "two evaluators are named 'EqualsExpected'"),
    ],
)
def test_json_schema_refuses_what_is_no_custom_evaluator(
    custom: list[object], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        Dataset.json_schema(custom_evaluators=custom)  # type: ignore[arg-type]
