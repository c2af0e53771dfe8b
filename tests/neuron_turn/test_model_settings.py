"""Model settings for one run: over the turn's own, carried in the input, kept across a pause."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import JsonValue

from layer0 import NonRetryableError, TurnInput, TurnOutput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import RunContext, ToolRegistry, tool
from neuron_turn import (
    ApprovalPolicy,
    Decision,
    InvalidModelSettingsError,
    ModelSettings,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    RunArgumentsError,
    Sampling,
    UnsupportedSamplingError,
    UnsupportedThinkingError,
    resume_input,
)
from neuron_turn.loop._blocking import run_blocking
from neuron_turn.loop.sampling import SAMPLING_SETTINGS
from neuron_turn.testing import ScriptedProvider

from .support import add, answer, ask, call, calls

TURN_DEFAULTS = NeuronTurnConfig(
    model="test-model",
    temperature=0.7,
    max_tokens=1000,
    thinking="low",
    sampling=Sampling(top_p=0.9, seed=1),
)


def _turn(
    script: list[Any], config: NeuronTurnConfig = TURN_DEFAULTS, **takes: Any
) -> tuple[NeuronTurn, ScriptedProvider]:
    options = {"takes_thinking": True, "takes_sampling": SAMPLING_SETTINGS, **takes}
    provider = ScriptedProvider(script, **options)
    return NeuronTurn(provider, tools=ToolRegistry([add]), config=config), provider


def _asked(request: ProviderRequest) -> tuple[object, ...]:
    return (
        request.temperature,
        request.max_tokens,
        request.thinking,
        request.sampling,
        request.parallel_tool_calls,
    )


async def test_a_runs_settings_go_on_each_of_its_requests_and_on_no_other_runs() -> None:
    turn, provider = _turn([calls(call("c1", "add", a=1, b=2)), answer("3"), answer("again")])
    own = ModelSettings(temperature=0, max_tokens=50, thinking="high", parallel_tool_calls=False)

    await turn.run("add 1 and 2", model_settings=own)
    await turn.run("and again")

    first, second, later = provider.requests
    kept_sampling = Sampling(top_p=0.9, seed=1)
    assert _asked(first) == _asked(second) == (0, 50, "high", kept_sampling, False)
    assert _asked(later) == (0.7, 1000, "low", kept_sampling, None)


async def test_what_a_run_leaves_unset_is_the_turns_and_sampling_is_laid_over_by_setting() -> None:
    turn, provider = _turn([answer("ok")])

    await turn.run("hi", model_settings=ModelSettings(sampling=Sampling(seed=7, top_k=4)))

    (request,) = provider.requests
    assert request.sampling == Sampling(top_p=0.9, seed=7, top_k=4)
    assert (request.temperature, request.max_tokens, request.thinking) == (0.7, 1000, "low")


async def test_thinking_false_for_one_run_turns_the_turns_thinking_off() -> None:
    turn, provider = _turn([answer("ok")])

    await turn.run("hi", model_settings=ModelSettings(thinking=False, temperature=0.0))

    assert (provider.requests[0].thinking, provider.requests[0].temperature) == (False, 0.0)


async def test_parallel_tool_calls_of_a_run_go_only_with_tools_offered() -> None:
    provider = ScriptedProvider([answer("ok")])
    bare = NeuronTurn(provider, config=NeuronTurnConfig(model="test-model"))

    await bare.run("hi", model_settings=ModelSettings(parallel_tool_calls=False))

    assert provider.requests[0].tools == [] and provider.requests[0].parallel_tool_calls is None


@pytest.mark.parametrize(
    ("own", "refused", "named"),
    [
        (ModelSettings(thinking="high"), UnsupportedThinkingError, "thinking"),
        (ModelSettings(sampling=Sampling(top_k=3)), UnsupportedSamplingError, "top_k"),
    ],
)
async def test_a_setting_the_provider_does_not_take_is_refused_before_any_model_call(
    own: ModelSettings, refused: type[Exception], named: str
) -> None:
    provider = ScriptedProvider([answer("never")], takes_sampling=["seed"])
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="test-model"))

    with pytest.raises(refused, match=named) as caught:
        await turn.run("hi", model_settings=own)

    assert isinstance(caught.value, NonRetryableError)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"temperature": -0.5}, "temperature"),
        ({"temperature": math.nan}, "temperature"),
        ({"temperature": math.inf}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"temperature": "0.5"}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls"),
        ({"sampling": {"seed": 7}}, "sampling"),
    ],
)
def test_settings_no_api_takes_are_refused_when_made_naming_the_setting(
    fields: dict[str, Any], named: str
) -> None:
    with pytest.raises(InvalidModelSettingsError, match=f"model setting {named} must be"):
        ModelSettings(**fields)


def test_a_thinking_value_that_is_none_is_refused_when_made() -> None:
    with pytest.raises(UnsupportedThinkingError, match="'max'"):
        ModelSettings(thinking="max")  # type: ignore[arg-type]


def test_a_turn_config_with_a_negative_temperature_is_refused_when_made() -> None:
    with pytest.raises(InvalidModelSettingsError, match="temperature"):
        NeuronTurnConfig(temperature=-1.0)


def test_settings_read_back_from_their_json_as_they_were() -> None:
    own = ModelSettings(
        temperature=0.2,
        max_tokens=800,
        thinking=False,
        sampling=Sampling(seed=7, stop_sequences=("END",), presence_penalty=-1.5),
        parallel_tool_calls=False,
    )

    assert own.to_json() == {
        "temperature": 0.2,
        "max_tokens": 800,
        "thinking": False,
        "sampling": {"seed": 7, "stop_sequences": ["END"], "presence_penalty": -1.5},
        "parallel_tool_calls": False,
    }
    assert ModelSettings.from_json(own.to_json()) == own
    assert ModelSettings().to_json() == {}


async def test_an_input_sent_as_json_carries_its_settings_as_run_does() -> None:
    turn, provider = _turn([answer("ok")])
    sent = {"model_settings": {"temperature": 0.1, "sampling": {"stop_sequences": ["END"]}}}
    input = TurnInput.model_validate_json(ask("hi", neuron_turn=sent).model_dump_json())

    await turn.execute(input)

    (request,) = provider.requests
    assert request.temperature == 0.1
    assert request.sampling == Sampling(top_p=0.9, seed=1, stop_sequences=("END",))


async def test_settings_sent_as_null_leave_the_turns_own_as_unset_ones_do() -> None:
    # A client writing every field (null where unset) had its stop_sequences refused.
    turn, provider = _turn([answer("ok")])
    sampling: dict[str, JsonValue] = dict.fromkeys(SAMPLING_SETTINGS)
    sent = {"temperature": None, "max_tokens": None, "sampling": sampling}

    await turn.execute(ask("hi", neuron_turn={"model_settings": sent}))

    (request,) = provider.requests
    assert _asked(request) == (0.7, 1000, "low", Sampling(top_p=0.9, seed=1), None)


@pytest.mark.parametrize(
    ("sent", "named"),
    [
        (3, "model_settings must be an object"),
        ({"temprature": 0}, "unknown keys \\['temprature'\\]"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"thinking": "max"}, "thinking"),
        ({"sampling": []}, "sampling must be an object"),
        ({"sampling": {"top_p": 5}}, "top_p"),
        ({"sampling": {"stop_sequences": "END"}}, "stop_sequences"),
        ({"sampling": {"stop_sequences": [""]}}, "stop_sequences"),
        ({"sampling": {"temperature": 1}}, "unknown keys \\['temperature'\\]"),
        # Whole numbers past a float's range (JSON has no bound on them).
        ({"temperature": 10**400}, "temperature"),
        ({"sampling": {"top_p": 10**400}}, "top_p"),
        ({"sampling": {"frequency_penalty": -(10**400)}}, "frequency_penalty"),
    ],
)
async def test_malformed_settings_in_an_input_are_refused_before_any_model_call(
    sent: JsonValue, named: str
) -> None:
    turn, provider = _turn([answer("never")])

    with pytest.raises(NonRetryableError, match=named):
        await turn.execute(ask("hi", neuron_turn={"model_settings": sent}))

    assert provider.requests == []


async def test_settings_given_twice_are_refused_before_any_model_call() -> None:
    turn, provider = _turn([])

    with pytest.raises(RunArgumentsError, match="give them one way"):
        await turn.run(
            "hi",
            model_settings=ModelSettings(temperature=0),
            metadata={"neuron_turn": {"model_settings": {"temperature": 1}}},
        )
    assert provider.requests == []


def test_run_sync_and_stream_take_model_settings_too() -> None:
    turn, provider = _turn([answer("a"), answer("b")])
    own = ModelSettings(max_tokens=12)

    turn.run_sync("hi", model_settings=own)

    async def streamed() -> TurnOutput:
        events = turn.stream("hi", model_settings=own)
        _ = [event async for event in events]
        return events.output

    run_blocking(streamed())
    assert [request.max_tokens for request in provider.requests] == [12, 12]


@tool
async def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def test_a_resume_after_an_approval_pause_asks_with_the_runs_settings() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", approval=ApprovalPolicy.of(["delete_file"]))

    async def dispatch(script: list[Any], request: TurnInput) -> ScriptedProvider:
        provider = ScriptedProvider(script, takes_thinking=True)
        turn = NeuronTurn(provider, tools=ToolRegistry([delete_file]), state=store, config=config)
        await LocalOrchestrator({"a": turn}, store).dispatch("a", request)
        return provider

    asked = {"model_settings": {"temperature": 0, "thinking": "high"}}
    await dispatch(
        [calls(call("c1", "delete_file", path="old.log"))],
        ask("tidy up", session="s1", neuron_turn=asked),
    )
    resumed = await dispatch([answer("done")], resume_input("s1", [Decision.approve("c1")]))

    (request,) = resumed.requests
    assert (request.temperature, request.thinking) == (0, "high")


def _thinking_first_step(context: RunContext[Any]) -> ModelSettings | None:
    return ModelSettings(thinking="high") if context.step == 0 else ModelSettings(temperature=0)


async def test_step_model_settings_decide_each_calls_settings_from_its_step() -> None:
    config = NeuronTurnConfig(model="test-model", step_model_settings=_thinking_first_step)
    provider = ScriptedProvider(
        [calls(call("c1", "add", a=1, b=2)), answer("3")], takes_thinking=True
    )
    turn = NeuronTurn(provider, tools=ToolRegistry([add]), config=config)

    await turn.run("add", model_settings=ModelSettings(max_tokens=50))

    first, second = provider.requests
    assert (first.thinking, first.temperature, first.max_tokens) == ("high", None, 50)
    assert (second.thinking, second.temperature, second.max_tokens) == (None, 0, 50)


@pytest.mark.parametrize(
    ("decide", "named"),
    [
        (lambda context: 1 / 0, "raised ZeroDivisionError"),
        (lambda context: {"temperature": 0}, "returned dict, not ModelSettings"),
        (lambda context: ModelSettings(thinking="low"), "thinking"),
    ],
)
async def test_a_step_function_that_fails_or_asks_amiss_stops_the_turn_before_the_call(
    decide: Any, named: str
) -> None:
    provider = ScriptedProvider([answer("never")])
    config = NeuronTurnConfig(model="test-model", step_model_settings=decide)

    with pytest.raises(NonRetryableError, match=named):
        await NeuronTurn(provider, config=config).run("hi")

    assert provider.requests == []


async def test_a_resumes_own_settings_are_laid_over_the_pauses_setting_by_setting() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", approval=ApprovalPolicy.of(["delete_file"]))

    async def dispatch(script: list[Any], request: TurnInput) -> ScriptedProvider:
        provider = ScriptedProvider(script, takes_thinking=True, takes_sampling=SAMPLING_SETTINGS)
        turn = NeuronTurn(provider, tools=ToolRegistry([delete_file]), state=store, config=config)
        await LocalOrchestrator({"a": turn}, store).dispatch("a", request)
        return provider

    asked = {"model_settings": {"thinking": "high", "sampling": {"seed": 7, "top_p": 0.5}}}
    await dispatch(
        [calls(call("c1", "delete_file", path="old.log"))],
        ask("tidy up", session="s1", neuron_turn=asked),
    )
    resume = resume_input("s1", [Decision.approve("c1")])
    own = {"model_settings": {"temperature": 0, "sampling": {"seed": 8}}}
    assert isinstance(resume.metadata, dict)
    resume = resume.model_copy(update={"metadata": {**resume.metadata, "neuron_turn": own}})
    resumed = await dispatch([answer("done")], resume)

    (request,) = resumed.requests
    assert (request.temperature, request.thinking) == (0, "high")
    assert request.sampling == Sampling(seed=8, top_p=0.5)
