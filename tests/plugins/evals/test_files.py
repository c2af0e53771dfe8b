"""Datasets in YAML and JSON files: round trips, evaluators by name, and malformed files
refused whole with the file, the case and the field named."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from neuron_evals import (
    Case,
    Contains,
    Dataset,
    DatasetFileError,
    EqualsExpected,
    EvaluatorContext,
    EvaluatorOutput,
    ExitReasonIs,
    IsInstance,
    LLMJudge,
    MaxCost,
    MaxDuration,
    ToolCalled,
    ValidatesAs,
    evaluator,
)
from neuron_evals.evaluator import Evaluator

from layer0 import TurnInput

from ._turns import City


@dataclass(frozen=True)
class Shorter(Evaluator):
    """A custom evaluator class: the answer is shorter than `limit`."""

    limit: int

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        return len(ctx.output_text) < self.limit


@evaluator
def polite(ctx: EvaluatorContext) -> bool:
    return "please" in ctx.output_text


def _dataset() -> Dataset:
    return Dataset(
        [
            Case(
                "capital",
                "Capital of France?",
                expected_output="Paris",
                metadata={"difficulty": "easy", "tags": ["geo"]},
                evaluators=[Contains("paris", case_sensitive=False), Shorter(20)],
            ),
            Case(
                "typed",
                TurnInput(message="Name a city.", trigger="user", metadata={"trace": "t"}),
                expected_output={"name": "Paris", "country": "France"},
                evaluators=[polite, ToolCalled("lookup")],
            ),
        ],
        evaluators=[
            EqualsExpected(),
            IsInstance("str"),
            ExitReasonIs("complete"),
            MaxCost("0.05"),
            MaxDuration(2.5),
            LLMJudge("Is it correct?", model="anthropic:claude-haiku-4-5", include_input=True),
            Contains({"name": "Paris"}),
        ],
        name="geography",
    )


def _specs(dataset: Dataset) -> list[object]:
    from neuron_evals._spec import spec_of

    return [spec_of(e) for e in dataset.evaluators] + [
        [spec_of(e) for e in case.evaluators] for case in dataset.cases
    ]


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_a_dataset_written_to_a_file_reads_back_the_same(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"geography{suffix}"
    original = _dataset()
    original.to_file(path)
    again = Dataset.from_file(path, custom_evaluators=[Shorter, polite])
    assert again.name == "geography"
    assert [(c.name, c.inputs, c.expected_output, c.metadata) for c in again.cases] == [
        (c.name, c.inputs, c.expected_output, c.metadata) for c in original.cases
    ]
    assert again.evaluators[:6] == original.evaluators[:6]
    assert again.cases[0].evaluators == original.cases[0].evaluators
    assert again.cases[1].evaluators[0] is polite
    assert _specs(again) == _specs(original)


def test_a_yaml_file_names_evaluators_in_their_short_forms(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    _dataset().to_file(path)
    text = path.read_text(encoding="utf-8")
    assert "- EqualsExpected\n" in text
    assert "- IsInstance: str\n" in text
    assert "- MaxCost: '0.05'\n" in text  # a decimal string, never a float
    assert "- Shorter: 20\n" in text
    assert "  - Contains:\n      value: paris\n      case_sensitive: false\n" in text


def test_a_hand_written_yaml_file_with_custom_evaluators_reads(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text(
        "cases:\n"
        "- name: greet\n"
        "  inputs: Say hello.\n"
        "  evaluators: [polite, {Shorter: {limit: 9}}]\n"
        "evaluators:\n"
        "- Contains: hello\n"
        "- MaxCost: 0.01\n",
        encoding="utf-8",
    )
    dataset = Dataset.from_file(path, custom_evaluators=[Shorter, polite])
    assert dataset.name is None
    assert dataset.evaluators == (Contains("hello"), MaxCost(0.01))
    assert MaxCost(0.01).limit == MaxCost("0.01").limit
    assert dataset.cases[0].evaluators == (polite, Shorter(9))
    assert dataset.cases[0].inputs == "Say hello."


def _malformed(tmp_path: Path, name: str, text: str) -> DatasetFileError:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetFileError) as caught:
        Dataset.from_file(path, custom_evaluators=[Shorter])
    assert str(path) in str(caught.value)
    return caught.value


def test_a_case_without_inputs_names_the_file_the_case_and_the_field(tmp_path: Path) -> None:
    error = _malformed(
        tmp_path,
        "d.yaml",
        "cases:\n- name: ok\n  inputs: hi\n- name: broken\n  expected_output: 1\n",
    )
    assert (error.case, error.field) == ("broken", "inputs")
    assert "case 'broken', field 'inputs': Field required" in str(error)


def test_an_unnamed_case_is_named_by_its_position(tmp_path: Path) -> None:
    error = _malformed(tmp_path, "d.json", json.dumps({"cases": [{"inputs": "hi"}]}))
    assert (error.case, error.field) == ("#1", "name")


def test_an_unknown_field_is_refused(tmp_path: Path) -> None:
    error = _malformed(tmp_path, "d.yaml", "cases:\n- name: a\n  inputs: hi\n  expectd: 1\n")
    assert (error.case, error.field) == ("a", "expectd")


def test_an_invalid_turn_input_names_its_field(tmp_path: Path) -> None:
    error = _malformed(
        tmp_path, "d.yaml", "cases:\n- name: a\n  inputs: {message: hi, trigger: nobody}\n"
    )
    assert error.case == "a"
    assert error.field is not None and error.field.startswith("inputs.trigger")


def test_an_unknown_evaluator_lists_the_known_ones(tmp_path: Path) -> None:
    error = _malformed(
        tmp_path, "d.yaml", "cases:\n- name: a\n  inputs: hi\n  evaluators: [EqualsExpectd]\n"
    )
    assert (error.case, error.field) == ("a", "evaluators[0]")
    assert "unknown evaluator 'EqualsExpectd'; available: Contains, Equals, EqualsExpected" in str(
        error
    )
    assert "Shorter" in str(error)


def test_wrong_evaluator_arguments_are_refused(tmp_path: Path) -> None:
    error = _malformed(
        tmp_path, "d.yaml", "evaluators:\n- Contains: {valu: x}\ncases:\n- name: a\n  inputs: hi\n"
    )
    assert (error.case, error.field) == (None, "evaluators[0]")
    assert "valu" in str(error)


def test_two_cases_with_one_name_in_a_file_are_refused(tmp_path: Path) -> None:
    error = _malformed(
        tmp_path, "d.yaml", "cases:\n- {name: a, inputs: x}\n- {name: a, inputs: y}\n"
    )
    assert (error.case, error.field) == ("a", "name")


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("d.yaml", "cases: [\n", "not valid YAML"),
        ("d.json", "{", "not valid JSON"),
        ("d.toml", "", "unknown suffix '.toml'"),
        ("d.yaml", "- just a list\n", "Input should be a valid dictionary"),
    ],
)
def test_a_file_that_is_no_dataset_is_refused(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    assert says in str(_malformed(tmp_path, name, text))


def test_a_missing_file_is_a_dataset_file_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileError, match="cannot read it"):
        Dataset.from_file(tmp_path / "absent.yaml")


def test_an_evaluator_holding_a_python_type_cannot_be_written(tmp_path: Path) -> None:
    dataset = Dataset([Case("a", "x")], evaluators=[ValidatesAs(City)])
    with pytest.raises(DatasetFileError, match="ValidatesAs holds a Python type"):
        dataset.to_file(tmp_path / "d.yaml")
    assert not (tmp_path / "d.yaml").exists()


def test_a_custom_evaluator_may_not_take_a_built_in_name(tmp_path: Path) -> None:
    @dataclass(frozen=True)
    class Contains(Evaluator):
        async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
            return True

    path = tmp_path / "d.yaml"
    path.write_text("cases: []\n", encoding="utf-8")
    with pytest.raises(DatasetFileError, match="two evaluators are named 'Contains'"):
        Dataset.from_file(path, custom_evaluators=[Contains])
