"""A judge built from `model="<provider>:<model>"` is closed after each judgment."""

from __future__ import annotations

import neuron_evals.judge
import pytest
from neuron_evals import Case, Dataset, LLMJudge

from neuron_turn import ProviderRequest, ProviderResponse
from neuron_turn.testing import FunctionProvider, text_response


class Closable(FunctionProvider):
    """A provider that says whether it was closed."""

    closed = False

    async def aclose(self) -> None:
        self.closed = True


async def _echo(inputs: object) -> object:
    return inputs


@pytest.mark.parametrize("answer", ['{"reason": "fine", "passed": true, "score": 1}', "junk"])
async def test_each_judge_built_from_a_model_name_is_closed_after_judging(
    answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[str, Closable]] = []

    def respond(request: ProviderRequest) -> ProviderResponse:
        return text_response(answer)

    def get_provider(model: str) -> Closable:
        built.append((model, Closable(respond)))
        return built[-1][1]

    monkeypatch.setattr(neuron_evals.judge, "get_provider", get_provider)
    judge = LLMJudge("Polite?", model="acme:judge-1")
    cases = [Case(f"c{n}", "hi") for n in range(3)]
    report = await Dataset(cases, evaluators=[judge]).evaluate(_echo)
    assert [model for model, _ in built] == ["acme:judge-1"] * 3
    assert all(provider.closed for _, provider in built)
    if answer == "junk":  # the judge failed each case, and was closed all the same
        assert all(case.evaluator_failures for case in report.cases)
    else:
        assert all(case.assertions["LLMJudge"].value is True for case in report.cases)


async def test_a_judge_given_as_a_provider_is_left_open_for_its_owner() -> None:
    verdict = '{"reason": "fine", "passed": true, "score": 1}'
    provider = Closable(lambda request: text_response(verdict))
    judge = LLMJudge("Polite?", provider=provider, model="m")
    await Dataset([Case("c", "hi")], evaluators=[judge]).evaluate(_echo)
    assert not provider.closed
