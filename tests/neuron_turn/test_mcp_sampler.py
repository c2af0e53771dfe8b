"""`ProviderSampler`: an MCP server's sampling requests, answered by a `Provider`.

On its own (a `SamplingRequest` in, the provider's request and the answer out)
and end to end: a turn whose MCP tool samples the turn's own scripted model
through the `samples` test server over stdio.
"""

from __future__ import annotations

import base64
import json
import logging

import pytest

from layer0 import Base64Source, TurnInput, usd
from neuron_tool.mcp import (
    SamplingAnswer,
    SamplingImage,
    SamplingMessage,
    SamplingRefused,
    SamplingRequest,
)
from neuron_turn import (
    ImagePart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderSampler,
    Sampling,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.neuron_tool.mcp_servers.paths import script_client
from tests.neuron_tool.mcp_servers.samples import HAIKU_OF_RAIN, MAX_TOKENS, PIXEL, SYSTEM

PNG = base64.b64decode(PIXEL)


def asking(max_tokens: int = 100, *, stops: tuple[str, ...] = ()) -> SamplingRequest:
    return SamplingRequest(
        server="poet",
        messages=(
            SamplingMessage("user", ("A haiku on rain.",)),
            SamplingMessage("assistant", (HAIKU_OF_RAIN,)),
            SamplingMessage("user", ("And on this?", SamplingImage(PNG, "image/png"))),
        ),
        max_tokens=max_tokens,
        system_prompt=SYSTEM,
        temperature=0.3,
        stop_sequences=stops,
        model_hints=("some-other-model",),
    )


async def test_the_model_gets_the_servers_system_prompt_and_messages_and_no_tools() -> None:
    model = ScriptedProvider([text_response("Puddles hold the sky.", model="small-1")])
    sampler = ProviderSampler(model, model="small")

    answer = await sampler(asking())

    assert answer == SamplingAnswer("Puddles hold the sky.", model="small-1", stop_reason="endTurn")
    (request,) = model.requests
    assert (request.model, request.system, request.temperature, request.tools) == (
        "small",  # the sampler's model, not the server's hint
        SYSTEM,
        0.3,
        (),
    )
    assert list(request.messages) == [
        ProviderMessage("user", [TextPart("A haiku on rain.")]),
        ProviderMessage("assistant", [TextPart(HAIKU_OF_RAIN)]),
        ProviderMessage(
            "user",
            [TextPart("And on this?"), ImagePart(Base64Source(data=PIXEL), "image/png")],
        ),
    ]


@pytest.mark.parametrize(("asked", "sent"), [(MAX_TOKENS, 4096), (100, 100)])
async def test_max_tokens_is_the_servers_capped_at_the_samplers(asked: int, sent: int) -> None:
    model = ScriptedProvider([text_response("ok")])

    await ProviderSampler(model)(asking(asked))

    assert model.requests[0].max_tokens == sent


async def test_a_model_stopped_by_its_token_cap_says_so_in_mcps_words() -> None:
    model = ScriptedProvider([text_response("Puddles", stop_reason="max_tokens")])

    answer = await ProviderSampler(model)(asking())

    assert (answer.content, answer.stop_reason) == ("Puddles", "maxTokens")


async def test_the_answer_ends_before_the_first_stop_sequence_the_model_wrote_past() -> None:
    # This provider takes no stop sequences: none is sent, the sampler cuts.
    model = ScriptedProvider([text_response("One line.\n###\nAnother.\nEND more")])

    answer = await ProviderSampler(model)(asking(stops=("END", "###")))

    assert (answer.content, answer.stop_reason) == ("One line.\n", "stopSequence")
    assert model.requests[0].sampling is None


async def test_stop_sequences_go_to_a_provider_that_takes_them_up_to_four() -> None:
    texts = [text_response("One line.\n###\nAnother.")] * 3
    model = ScriptedProvider(texts, takes_sampling=["stop_sequences"])
    sampler = ProviderSampler(model)

    answer = await sampler(asking(stops=("END", "###")))
    await sampler(asking(stops=tuple(f"S{i}" for i in range(5))))
    await sampler(asking(stops=("END", "")))

    assert (answer.content, answer.stop_reason) == ("One line.\n", "stopSequence")
    sent = [request.sampling for request in model.requests]
    assert sent == [Sampling(stop_sequences=("END", "###")), None, None]


async def test_a_filtered_answer_is_refused_to_the_server() -> None:
    model = ScriptedProvider([text_response("", stop_reason="content_filter")])

    with pytest.raises(SamplingRefused, match="the model stopped with 'content_filter'"):
        await ProviderSampler(model)(asking())


async def test_requests_past_max_requests_are_refused_without_running_the_model() -> None:
    model = ScriptedProvider([text_response("one"), text_response("two"), text_response("3")])
    sampler = ProviderSampler(model, max_requests=2)

    await sampler(asking())
    await sampler(asking())
    with pytest.raises(SamplingRefused) as refused:
        await sampler(asking())

    assert str(refused.value) == "this client answers at most 2 sampling requests, all spent"
    assert (len(model.requests), sampler.requests) == (2, 2)


async def test_each_calls_cost_is_added_up_and_logged_with_the_servers_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    usage = TokenUsage(input_tokens=120, output_tokens=30)
    model = ScriptedProvider(
        [
            text_response("a", usage=usage, cost=usd("0.25"), model="small-1"),
            text_response("b", usage=usage, cost=usd("0.5"), model="small-1"),
        ]
    )
    sampler = ProviderSampler(model)

    with caplog.at_level(logging.INFO, logger="neuron_turn.loop.mcp_sampling"):
        await sampler(asking())
        await sampler(asking())

    assert sampler.cost == usd("0.75")
    assert caplog.messages[0] == (
        "MCP server 'poet' sampled model 'small-1': 120 input and 30 output tokens,"
        " cost $0.2500 (outside any turn's budget)"
    )


@pytest.mark.parametrize("option", [{"max_tokens": 0}, {"max_requests": -1}, {"max_tokens": True}])
def test_limits_must_be_positive_whole_numbers(option: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be a positive whole number"):
        ProviderSampler(ScriptedProvider([]), **option)


async def test_a_turns_mcp_tool_samples_the_turns_own_model_within_the_cap() -> None:
    write = ToolUsePart("call_1", "write", {"case": "poem"})
    model = ScriptedProvider(
        [
            tool_call_response(write),
            text_response("Puddles hold the sky.", model="small-1"),  # the server's sample
            text_response("The server's poem: Puddles hold the sky."),
        ]
    )
    sampler = ProviderSampler(model, model="small")
    async with script_client("samples", name="poet", sampling=sampler) as server:
        turn = NeuronTurn(model, tools=await server.list_tools())
        output = await turn.execute(TurnInput(message="Ask the poet", trigger="user"))

    assert output.metadata.tools_called[0].success
    sampled = model.requests[1]
    assert (sampled.system, sampled.max_tokens, sampled.tools) == (SYSTEM, 4096, ())
    assert sampled.messages[0] == ProviderMessage("user", [TextPart("A haiku on rain, please.")])
    result = model.requests[2].messages[-1].content[0]
    assert isinstance(result, ToolResultPart) and not result.is_error
    assert json.loads(result.content) == {
        "role": "assistant",
        "content": {"type": "text", "text": "Puddles hold the sky."},
        "model": "small-1",
        "stopReason": "endTurn",
    }
    assert sampler.requests == 1


async def test_a_turns_mcp_tool_whose_request_is_hostile_fails_without_running_the_model() -> None:
    write = ToolUsePart("call_1", "write", {"case": "many", "size": 1000})
    model = ScriptedProvider([tool_call_response(write), text_response("It failed.")])
    sampler = ProviderSampler(model)
    async with script_client("samples", name="poet", sampling=sampler) as server:
        turn = NeuronTurn(model, tools=await server.list_tools())
        await turn.execute(TurnInput(message="Ask the poet", trigger="user"))

    assert len(model.requests) == 2  # the tool call and the answer: no sample
    result = model.requests[1].messages[-1].content[0]
    assert isinstance(result, ToolResultPart) and result.is_error
    assert "the request holds 1000 messages; this client takes at most 64" in result.content
    assert sampler.requests == 0


async def test_a_sample_during_a_turns_tool_call_counts_in_its_tokens_cost_and_budget() -> None:
    write = ToolUsePart("call_1", "write", {"case": "poem"})
    sample = text_response("Puddles.", usage=TokenUsage(500, 20), cost=usd("0.30"))
    model = ScriptedProvider(
        [
            tool_call_response(write, usage=TokenUsage(10, 5), cost=usd("0.01")),
            sample,
            text_response("never sent"),
        ]
    )
    sampler = ProviderSampler(model)
    limited = NeuronTurnConfig(max_cost=usd("0.10"))
    async with script_client("samples", name="poet", sampling=sampler) as server:
        turn = NeuronTurn(model, tools=await server.list_tools(), config=limited)
        output = await turn.execute(TurnInput(message="Ask the poet", trigger="user"))

    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (510, 25)
    assert output.metadata.cost == usd("0.31") and sampler.cost == usd("0.30")
    # The sample went past max_cost: the turn stopped after that round.
    assert output.exit_reason == "budget_exhausted" and len(model.requests) == 2


async def test_a_sample_outside_a_turn_is_counted_by_the_sampler_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedProvider([text_response("Puddles.", cost=usd("0.30"))])
    sampler = ProviderSampler(model)
    caplog.set_level(logging.INFO, logger="neuron_turn.loop.mcp_sampling")
    async with script_client("samples", name="poet", sampling=sampler) as server:
        await server.call_tool("write", {"case": "poem"})

    assert sampler.cost == usd("0.30")
    assert "outside any turn's budget" in caplog.text
