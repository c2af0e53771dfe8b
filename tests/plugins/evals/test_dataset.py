"""`Dataset.evaluate` over real NeuronTurns: facts from the TurnOutput, failures kept per case,
concurrency bounded, cancellation propagated."""

from __future__ import annotations

import asyncio

import pytest
from neuron_evals import (
    Case,
    Dataset,
    DuplicateCaseError,
    EqualsExpected,
    EvaluatorContext,
    ExitReasonIs,
    IsInstance,
    MaxCost,
    ToolCalled,
    evaluator,
)

from layer0 import TurnInput, TurnMetadata, TurnOutput, usd
from neuron_turn import NeuronTurn, NeuronTurnConfig, ProviderRequest, ProviderResponse, ToolUsePart
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ._turns import City, add, adding, answering


async def test_a_turn_with_tools_runs_per_case_and_its_facts_reach_the_report() -> None:
    dataset = Dataset(
        [Case("sum", "What is 2+3?", expected_output="5")],
        evaluators=[EqualsExpected(), ToolCalled("add"), ExitReasonIs("complete"), MaxCost("0.01")],
    )
    report = await dataset.evaluate(adding(), name="adding")
    case = report.case("sum")
    assert report.name == "adding"
    assert case.passed, case
    assert case.output_text == "5"
    assert case.exit_reason == "complete"
    assert case.cost == usd("0.003")
    assert case.turns_used == 2
    assert case.tools_called == ["add"]
    assert list(case.assertions) == ["EqualsExpected", "ToolCalled", "ExitReasonIs", "MaxCost"]
    assert case.duration > 0


async def test_a_typed_turn_s_answer_is_the_typed_value_and_equals_a_mapping() -> None:
    seen: list[object] = []

    @evaluator
    def keep(ctx: EvaluatorContext) -> bool:
        seen.append(ctx.output)
        return True

    turn = NeuronTurn(
        ScriptedProvider([text_response('{"name": "Paris", "country": "France"}')]),
        output_type=City,
    )
    dataset = Dataset(
        [Case("paris", "Capital of France?", {"name": "Paris", "country": "France"})],
        evaluators=[EqualsExpected(), IsInstance("City"), IsInstance("BaseModel"), keep],
    )
    report = await dataset.evaluate(turn)
    case = report.case("paris")
    assert seen == [City(name="Paris", country="France")]
    assert case.passed, case
    assert case.output == {"name": "Paris", "country": "France"}


async def test_a_typed_turn_without_a_result_answers_none() -> None:
    turn = NeuronTurn(
        ScriptedProvider([text_response("not json"), text_response("nope"), text_response("no")]),
        output_type=City,
    )
    report = await Dataset(
        [Case("paris", "Capital?", {"name": "Paris", "country": "France"})],
        evaluators=[EqualsExpected()],
    ).evaluate(turn)
    case = report.case("paris")
    assert case.exit_reason == "custom:output_invalid"
    assert case.output is None
    assert case.assertions["EqualsExpected"].value is False


async def test_a_task_that_raises_is_its_case_s_error_and_the_other_cases_still_run() -> None:
    async def task(inputs: str | TurnInput) -> str:
        if inputs == "boom":
            raise ValueError("the task broke")
        return str(inputs).upper()

    dataset = Dataset(
        [Case("first", "a", "A"), Case("broken", "boom", "BOOM"), Case("last", "c", "C")],
        evaluators=[EqualsExpected()],
    )
    report = await dataset.evaluate(task)
    broken = report.case("broken")
    assert [case.name for case in report.cases] == ["first", "broken", "last"]
    assert [case.name for case in report.failures] == ["broken"]
    assert broken.task_error is not None
    assert (broken.task_error.error_type, broken.task_error.message) == (
        "ValueError",
        "the task broke",
    )
    assert broken.assertions == {} and not broken.passed
    assert report.case("first").passed and report.case("last").passed
    assert report.summary().errors == 1


async def test_a_turn_over_its_max_cost_ends_budget_exhausted_and_fails_those_checks() -> None:
    def respond(request: ProviderRequest) -> ProviderResponse:
        return tool_call_response(ToolUsePart("c1", "add", {"a": 1, "b": 1}), cost=usd("0.004"))

    turn = NeuronTurn(
        FunctionProvider(respond), tools=[add], config=NeuronTurnConfig(max_cost=usd("0.005"))
    )
    report = await Dataset(
        [Case("spender", "Add forever.")], evaluators=[ExitReasonIs("complete"), MaxCost("0.005")]
    ).evaluate(turn)
    case = report.case("spender")
    assert case.exit_reason == "budget_exhausted"
    assert case.cost == usd("0.008")
    assert case.assertions["ExitReasonIs"].value is False
    assert case.assertions["ExitReasonIs"].reason == "it ended budget_exhausted"
    assert case.assertions["MaxCost"].value is False
    assert case.assertions["MaxCost"].reason == "it cost $0.008, over $0.005"


async def test_an_evaluator_that_raises_is_that_evaluator_s_failure_and_the_rest_are_kept() -> None:
    @evaluator
    def broken(ctx: EvaluatorContext) -> bool:
        raise KeyError("no such field")

    report = await Dataset(
        [Case("one", "hi", "HI"), Case("two", "yo", "YO")],
        evaluators=[broken, EqualsExpected()],
    ).evaluate(answering(str.upper))
    for case in report.cases:
        assert [(f.name, f.error_type, f.message) for f in case.evaluator_failures] == [
            ("broken", "KeyError", "'no such field'")
        ]
        assert case.assertions["EqualsExpected"].value is True
        assert (case.assertions_passed, case.assertions_total) == (1, 2)
        assert not case.passed


async def test_an_evaluator_returning_what_is_not_a_result_is_its_failure() -> None:
    @evaluator
    def wrong(ctx: EvaluatorContext) -> object:
        return [1, 2]

    report = await Dataset([Case("one", "hi")], evaluators=[wrong]).evaluate(answering(str))
    (failure,) = report.case("one").evaluator_failures
    assert failure.error_type == "TypeError"
    assert "list" in failure.message


async def test_scores_labels_and_assertions_are_sorted_by_their_value_s_type() -> None:
    @evaluator
    async def judge(ctx: EvaluatorContext) -> dict[str, bool | float | str]:
        return {
            "short": len(ctx.output_text) < 5,
            "length": len(ctx.output_text) / 10,
            "tone": "loud",
        }

    report = await Dataset([Case("one", "hi"), Case("two", "hello")], evaluators=[judge]).evaluate(
        answering(str.upper)
    )
    one = report.case("one")
    assert one.assertions["short"].value is True
    assert one.scores["length"].value == pytest.approx(0.2)
    assert one.labels["tone"].value == "loud"
    assert report.summary().mean_scores == {"length": pytest.approx(0.35)}


async def test_case_evaluators_run_after_the_dataset_s_and_same_names_get_a_suffix() -> None:
    report = await Dataset(
        [Case("one", "hi", evaluators=[ToolCalled("add")])],
        evaluators=[ExitReasonIs(), ExitReasonIs("max_turns")],
    ).evaluate(answering(str))
    assert list(report.case("one").assertions) == ["ExitReasonIs", "ExitReasonIs_2", "ToolCalled"]


async def test_a_plain_function_s_return_value_is_the_answer_without_turn_facts() -> None:
    async def shout(inputs: str | TurnInput) -> str:
        return str(inputs).upper()

    report = await Dataset(
        [Case("one", "hi", "HI")], evaluators=[EqualsExpected(), ExitReasonIs()]
    ).evaluate(shout)
    case = report.case("one")
    assert report.name == "shout"
    assert case.output == "HI" and case.output_text == "HI"
    assert case.cost is None and case.exit_reason is None and case.tokens_in is None
    assert case.assertions["EqualsExpected"].value is True
    assert case.assertions["ExitReasonIs"].reason == "the task returned no TurnOutput"


async def test_any_turn_gets_a_turn_input_and_a_given_turn_input_is_passed_as_it_is() -> None:
    got: list[TurnInput] = []

    class Echo:
        async def execute(self, input: TurnInput) -> TurnOutput:
            got.append(input)
            return TurnOutput(
                message=input.message, exit_reason="complete", metadata=TurnMetadata.zero()
            )

    given = TurnInput(message="hello", trigger="user", metadata={"trace": "t-1"})
    report = await Dataset([Case("text", "hi"), Case("given", given)]).evaluate(Echo())
    assert got[0] == TurnInput(message="hi", trigger="user")
    assert got[1] is given
    assert report.case("given").output_text == "hello"
    assert report.case("given").inputs == given


def test_two_cases_with_one_name_are_an_error_naming_it() -> None:
    with pytest.raises(DuplicateCaseError, match="'twin'"):
        Dataset([Case("twin", "a"), Case("other", "b"), Case("twin", "c")])


async def test_cases_and_evaluators_added_later_run_too() -> None:
    dataset = Dataset([Case("one", "hi", "HI")])
    dataset.add_case(Case("two", "yo", "YO"))
    dataset.add_evaluator(EqualsExpected())
    dataset.add_evaluator(ToolCalled("add"), specific_case="two")
    with pytest.raises(DuplicateCaseError, match="'one'"):
        dataset.add_case(Case("one", "again"))
    with pytest.raises(LookupError, match="'three'"):
        dataset.add_evaluator(ExitReasonIs(), specific_case="three")
    report = await dataset.evaluate(answering(str.upper))
    assert list(report.case("one").assertions) == ["EqualsExpected"]
    assert list(report.case("two").assertions) == ["EqualsExpected", "ToolCalled"]


async def test_max_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        await Dataset([Case("one", "a")]).evaluate(answering(str), max_concurrency=0)


class _Gate:
    """A task that counts how many cases are in it at once and waits for the test to open it."""

    def __init__(self, until: int) -> None:
        self.until = until
        self.in_flight = 0
        self.peak = 0
        self.entered: list[str] = []
        self.cancelled: list[str] = []
        self.reached = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, inputs: str | TurnInput) -> str:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.entered.append(str(inputs))
        if self.in_flight >= self.until:
            self.reached.set()
        try:
            await self.open.wait()
        except asyncio.CancelledError:
            self.cancelled.append(str(inputs))
            raise
        finally:
            self.in_flight -= 1
        return str(inputs)


@pytest.mark.parametrize(("limit", "peak"), [(2, 2), (1, 1), (None, 5)])
async def test_no_more_than_max_concurrency_cases_run_at_once(limit: int | None, peak: int) -> None:
    gate = _Gate(until=peak)
    dataset = Dataset([Case(f"c{i}", f"c{i}") for i in range(5)])
    run = asyncio.create_task(dataset.evaluate(gate, max_concurrency=limit))
    await gate.reached.wait()
    assert gate.entered == [f"c{i}" for i in range(peak)]
    gate.open.set()
    report = await run
    assert gate.peak == peak
    assert [case.output for case in report.cases] == [f"c{i}" for i in range(5)]


async def test_cancelling_the_run_cancels_the_running_cases_and_propagates() -> None:
    gate = _Gate(until=2)
    dataset = Dataset([Case(f"c{i}", f"c{i}") for i in range(4)])
    run = asyncio.create_task(dataset.evaluate(gate, max_concurrency=2))
    await gate.reached.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert sorted(gate.cancelled) == ["c0", "c1"]
    assert gate.entered == ["c0", "c1"]


def test_evaluate_sync_runs_a_whole_evaluation_from_a_script() -> None:
    report = Dataset([Case("one", "hi", "HI")], evaluators=[EqualsExpected()]).evaluate_sync(
        answering(str.upper)
    )
    assert report.case("one").passed


async def test_evaluate_sync_inside_an_event_loop_says_to_await_evaluate() -> None:
    with pytest.raises(RuntimeError, match="await evaluate"):
        Dataset([Case("one", "hi")]).evaluate_sync(answering(str))
