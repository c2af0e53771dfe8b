"""`LLMJudge` asks a model through a Provider with a typed NeuronTurn; its cost is kept apart
from the task's, and no provider's key reaches a report."""

from __future__ import annotations

import json

from neuron_evals import JUDGE_SYSTEM, Case, Dataset, EqualsExpected, LLMJudge

from layer0 import usd
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse, ProviderServerError
from neuron_turn.testing import FunctionProvider, text_response

from ._turns import answering, last_text

TASK_KEY = "sk-task-FAKE-0123456789abcdef"
JUDGE_KEY = "sk-judge-FAKE-fedcba9876543210"


def _verdict(passed: bool, score: float, reason: str = "It is polite.") -> ProviderResponse:
    body = json.dumps({"reason": reason, "passed": passed, "score": score})
    return text_response(body, cost=usd("0.0002"))


async def test_the_judge_gets_the_rubric_and_the_output_and_its_verdict_is_reported() -> None:
    judge_model = FunctionProvider(lambda request: _verdict(True, 0.75))
    judge = LLMJudge("Is the answer polite?", provider=judge_model, model="judge-1")
    report = await Dataset([Case("greet", "hello")], evaluators=[judge]).evaluate(
        answering(lambda text: f"{text.upper()}, please")
    )
    (request,) = judge_model.requests
    assert request.model == "judge-1"
    assert request.system is not None and JUDGE_SYSTEM in request.system
    prompt = last_text(request)
    assert "<Output>\nHELLO, please\n</Output>" in prompt
    assert "<Rubric>\nIs the answer polite?\n</Rubric>" in prompt
    assert "<Input>" not in prompt
    assert list(request.tools) == []
    case = report.case("greet")
    assert case.assertions["LLMJudge"].value is True
    assert case.assertions["LLMJudge"].reason == "It is polite."
    assert case.scores["LLMJudge_score"].value == 0.75
    assert case.passed


async def test_the_judge_s_cost_is_reported_apart_from_the_task_s() -> None:
    judge = LLMJudge("Polite?", provider=FunctionProvider(lambda request: _verdict(False, 0.1)))
    report = await Dataset([Case("one", "a"), Case("two", "b")], evaluators=[judge]).evaluate(
        answering(str, cost="0.001")
    )
    case = report.case("one")
    assert case.cost == usd("0.001")
    assert case.evaluator_cost == usd("0.0002")
    assert not case.passed
    summary = report.summary()
    assert (summary.total_cost, summary.evaluator_cost) == (usd("0.002"), usd("0.0004"))


async def test_the_judge_is_shown_the_input_and_expected_output_when_asked() -> None:
    judge_model = FunctionProvider(lambda request: _verdict(True, 1.0))
    judge = LLMJudge(
        "Same meaning?",
        provider=judge_model,
        include_input=True,
        include_expected_output=True,
        score=False,
        evaluation_name="meaning",
    )
    report = await Dataset(
        [Case("capital", "Capital of France?", expected_output="Paris")], evaluators=[judge]
    ).evaluate(answering(lambda text: "It is Paris."))
    prompt = last_text(judge_model.requests[0])
    assert "<Input>\nCapital of France?\n</Input>" in prompt
    assert "<ExpectedOutput>\nParis\n</ExpectedOutput>" in prompt
    case = report.case("capital")
    assert list(case.assertions) == ["meaning"] and case.scores == {}


async def test_a_judge_that_gives_no_verdict_is_that_evaluator_s_failure() -> None:
    judge = LLMJudge("Polite?", provider=FunctionProvider(lambda request: text_response("yes")))
    report = await Dataset([Case("one", "a", "a")], evaluators=[judge, EqualsExpected()]).evaluate(
        answering(str)
    )
    case = report.case("one")
    (failure,) = case.evaluator_failures
    assert (failure.name, failure.error_type) == ("LLMJudge", "JudgeError")
    assert "custom:output_invalid" in failure.message
    assert case.assertions["EqualsExpected"].value is True


async def test_a_judge_without_provider_or_model_says_what_it_needs() -> None:
    report = await Dataset([Case("one", "a")], evaluators=[LLMJudge("Polite?")]).evaluate(
        answering(str)
    )
    (failure,) = report.case("one").evaluator_failures
    assert "LLMJudge needs provider= or model=" in failure.message


class _KeyedProvider(FunctionProvider):
    """A provider holding an API key, with a repr that would show it if anything printed it."""

    def __init__(self, key: str, fn: object) -> None:
        super().__init__(fn)  # type: ignore[arg-type]
        self.api_key = key

    def __repr__(self) -> str:
        return f"_KeyedProvider(api_key={self.api_key!r})"


async def test_neither_the_task_s_nor_the_judge_s_key_appears_in_a_report() -> None:
    def task_answer(request: ProviderRequest) -> ProviderResponse:
        if last_text(request) == "fail":
            raise ProviderServerError("the server broke", provider="keyed", status_code=500)
        return text_response("fine", cost=usd("0.001"))

    task = NeuronTurn(_KeyedProvider(TASK_KEY, task_answer))
    judge = LLMJudge(
        "Fine?", provider=_KeyedProvider(JUDGE_KEY, lambda r: _verdict(True, 1)), model="m"
    )
    dataset = Dataset([Case("ok", "hi"), Case("broken", "fail")], evaluators=[judge])
    report = await dataset.evaluate(task)
    assert report.case("broken").task_error is not None
    assert report.case("ok").passed
    for text in (report.render(), report.to_json(), str(report), repr(report)):
        assert TASK_KEY not in text
        assert JUDGE_KEY not in text
