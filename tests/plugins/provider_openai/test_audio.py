"""Audio in a message: `input_audio` on Chat Completions, priced at the audio price; refused
where the API takes none (video anywhere, audio on the Responses API)."""

from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from moneyed import Money

from layer0 import Base64Source, Content, TextBlock, TurnInput, UrlSource
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_turn import InvalidRequestError, NeuronTurn, document_block
from neuron_turn.loop.provider import DocumentPart, ProviderMessage, ToolResultPart

from .._http_provider_support import json_response, user
from . import _responses_support as responses
from ._support import KEY, completion, mocked, request, tool_call

WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt ").decode()
MP3 = base64.b64encode(b"ID3\x04\x00\x00\x00\x00\x00\x00").decode()


def audio(media_type: str, data: str = WAV, name: str | None = "call.wav") -> DocumentPart:
    return DocumentPart(Base64Source(data=data), media_type, name)


def asking(*parts: Any) -> ProviderMessage:
    return ProviderMessage("user", [*parts])


@pytest.mark.parametrize(
    ("media_type", "data", "format"),
    [("audio/wav", WAV, "wav"), ("audio/x-wav", WAV, "wav"), ("audio/mpeg", MP3, "mp3")],
)
async def test_wav_and_mp3_go_as_input_audio(media_type: str, data: str, format: str) -> None:
    provider, recorder = mocked()

    await provider.complete(request(asking(audio(media_type, data))))

    (sent,) = recorder.body["messages"]
    assert sent["content"] == [
        {"type": "input_audio", "input_audio": {"data": data, "format": format}}
    ]


@pytest.mark.parametrize(
    ("part", "said"),
    [
        (
            audio("audio/ogg", name="talk.ogg"),
            "audio (talk.ogg, audio/ogg): Chat Completions take WAV or MP3",
        ),
        (
            DocumentPart(UrlSource(url="https://example.com/a.wav"), "audio/wav", "a.wav"),
            "audio (a.wav, audio/wav by URL): Chat Completions take WAV or MP3 audio by its bytes",
        ),
        (
            DocumentPart(UrlSource(url="https://youtu.be/x"), "video/mp4", "clip.mp4"),
            "video (clip.mp4, video/mp4): Chat Completions take no video; Gemini reads it",
        ),
    ],
    ids=["ogg", "by-url", "video"],
)
async def test_audio_the_api_cannot_take_is_refused_naming_it_before_any_request(
    part: DocumentPart, said: str
) -> None:
    provider, recorder = mocked()

    with pytest.raises(InvalidRequestError, match=said.replace("(", r"\(").replace(")", r"\)")):
        await provider.complete(request(asking(part)))

    assert recorder.requests == []


async def test_a_tools_audio_goes_after_the_tool_message_and_its_video_is_a_note() -> None:
    first = json_response(
        completion(None, finish_reason="tool_calls", tool_calls=[tool_call("c1", "record", "{}")])
    )
    provider, recorder = mocked(first, json_response(completion("A dog barks.")))
    answer = await provider.complete(request(user("What is that sound?")))
    calls = ProviderMessage("assistant", answer.content)
    clip = DocumentPart(Base64Source(data="AAAA"), "video/mp4", "clip.mp4")
    result = ToolResultPart("c1", "recorded", files=(audio("audio/wav"), clip))

    await provider.complete(request(user("What is that sound?"), calls, asking(result)))

    assert recorder.body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "recorded"},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The tool call record (call c1) returned these 2 files with its "
                    "result:",
                },
                {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                {
                    "type": "text",
                    "text": "[The tool returned the video clip.mp4 (video/mp4), which is not "
                    "shown: video (clip.mp4, video/mp4): Chat Completions take no video; Gemini "
                    "reads it]",
                },
            ],
        },
    ]


def audio_usage(prompt: int, completion_tokens: int, audio_in: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": audio_in},
        "completion_tokens_details": {"audio_tokens": 0, "reasoning_tokens": 0},
    }


async def test_audio_tokens_are_priced_at_the_models_audio_price() -> None:
    body = completion("She asks for Friday.", model="gpt-audio", usage=audio_usage(1000, 100, 800))
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(request(asking(audio("audio/wav")), model="gpt-audio"))

    expected = calc_price(
        Usage(input_tokens=1000, output_tokens=100, input_audio_tokens=800),
        "gpt-audio",
        provider_id="openai",
    ).total_price
    text_only = calc_price(
        Usage(input_tokens=1000, output_tokens=100), "gpt-audio", provider_id="openai"
    ).total_price
    assert answer.cost == Money(expected, "USD")
    assert expected > text_only  # the audio price is not the text price


async def test_audio_counts_past_the_totals_are_capped_not_a_failed_call() -> None:
    body = completion("ok", model="gpt-audio", usage=audio_usage(10, 5, 10_000))
    provider, _ = mocked(json_response(body))

    answer = await provider.complete(request(model="gpt-audio"))

    assert answer.cost is not None and answer.cost > Money(Decimal(0), "USD")


async def test_a_whole_turn_with_audio_attached_sends_it_and_prices_it() -> None:
    body = completion("A refund.", model="gpt-audio", usage=audio_usage(1000, 100, 800))
    provider, recorder = (
        mocked(json_response(body), model_kwargs=None) if False else mocked(json_response(body))
    )
    message = Content(
        [
            TextBlock(text="What does the caller want?"),
            document_block(base64.b64decode(WAV), media_type="audio/wav", name="call.wav"),
        ]
    )
    turn = NeuronTurn(provider)

    output = await turn.execute(TurnInput(message=message, trigger="user"))

    assert output.message.as_text() == "A refund."
    (sent,) = recorder.body["messages"]
    assert sent["content"][1] == {
        "type": "input_audio",
        "input_audio": {"data": WAV, "format": "wav"},
    }
    assert output.metadata.cost > Money(Decimal("0.02"), "USD")


@pytest.mark.parametrize(
    ("part", "said"),
    [
        (
            audio("audio/wav"),
            "audio (call.wav, audio/wav): the Responses API takes no audio input; send audio "
            "through Chat Completions",
        ),
        (
            DocumentPart(UrlSource(url="https://youtu.be/x"), "video/mp4", "clip.mp4"),
            "video (clip.mp4, video/mp4): the Responses API takes no video input; Gemini reads "
            "video",
        ),
    ],
    ids=["audio", "video"],
)
async def test_the_responses_api_refuses_audio_and_video_before_any_request(
    part: DocumentPart, said: str
) -> None:
    provider, recorder = responses.mocked()

    with pytest.raises(InvalidRequestError) as refused:
        await provider.complete(request(asking(part), model="gpt-5"))

    assert said in str(refused.value)
    assert recorder.requests == []


async def test_the_responses_api_shows_a_note_for_a_tools_audio() -> None:
    provider, recorder = responses.mocked()
    calls = ProviderMessage("assistant", [])
    result = ToolResultPart("c1", "recorded", files=(audio("audio/wav"),))

    await provider.complete(request(user("Sound?"), calls, asking(result), model="gpt-5"))

    (output,) = [
        item for item in recorder.body["input"] if item.get("type") == "function_call_output"
    ]
    assert output["output"][1] == {
        "type": "input_text",
        "text": "[The tool returned the audio call.wav (audio/wav), which is not shown: audio "
        "(call.wav, audio/wav): the Responses API takes no audio input; send audio through Chat "
        "Completions (openai:), with an audio model]",
    }


def test_the_responses_provider_is_the_one_refusing() -> None:
    assert OpenAIResponsesProvider("gpt-5", api_key=KEY).name == "openai-responses"
