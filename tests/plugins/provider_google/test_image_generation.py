"""Images a Gemini model makes (`ImageGeneration`): the request, the answer, history and cost."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from typing import Any

import genai_prices
import httpx
import pytest
from genai_prices.types import ModelPrice as GenaiModelPrice
from moneyed import Money

from layer0 import Base64Source, ImageBlock, TurnInput, UrlSource
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_provider_google import GoogleProvider
from neuron_provider_google._pricing import parse_prices
from neuron_turn import HostedToolCall, ImageGeneration, NeuronTurn, NeuronTurnConfig, WebSearch
from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.provider import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    ProviderResponse,
    RawPart,
    TextPart,
)
from neuron_turn.loop.provider_errors import ProviderResponseError

from ._support import KEY, Recorder, json_response, mocked, request, response, sse, text, user

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
"""A 1x1 PNG, base64 as the API sends it."""
PNG_BYTES = len(base64.b64decode(PNG))
SIGNATURE = "EhsKGQIcS/Wg+image/signature=="
IMAGE_MODEL = "gemini-2.5-flash-image"


def image(data: str = PNG, mime: str = "image/png", **fields: Any) -> dict[str, Any]:
    """An `inlineData` part of a model's answer."""
    return {"inlineData": {"mimeType": mime, "data": data}, **fields}


def image_usage(
    text_tokens: int = 10, image_tokens: int = 1290, prompt: int = 12
) -> dict[str, Any]:
    """`usageMetadata` of an answer holding an image, as Gemini's image models report it."""
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": text_tokens + image_tokens,
        "totalTokenCount": prompt + text_tokens + image_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "candidatesTokensDetails": [
            {"modality": "TEXT", "tokenCount": text_tokens},
            {"modality": "IMAGE", "tokenCount": image_tokens},
        ],
    }


def drawn(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """An image model's answer holding `parts`."""
    fields.setdefault("usageMetadata", image_usage())
    fields.setdefault("modelVersion", IMAGE_MODEL)
    return response(*parts, **fields)


def calc_price(text_tokens: int, image_tokens: int, prompt: int, model: str) -> Money:
    """genai-prices' own price for such a call, its usage built by hand."""
    usage = genai_prices.Usage(
        input_tokens=prompt,
        output_tokens=text_tokens + image_tokens,
        output_image_tokens=image_tokens,
    )
    return Money(genai_prices.calc_price(usage, model, provider_id="google").total_price, "USD")


# --- the request ----------------------------------------------------------------


async def test_image_generation_asks_for_text_and_images_and_sends_no_tools_entry() -> None:
    provider, recorder = mocked()
    await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert recorder.body["generationConfig"] == {"responseModalities": ["TEXT", "IMAGE"]}
    assert "tools" not in recorder.body


async def test_a_request_without_it_is_the_body_it_always_was() -> None:
    provider, recorder = mocked()
    await provider.complete(request(max_tokens=50))
    plain = recorder.requests[-1].content
    await provider.complete(request(max_tokens=50, hosted_tools=[ImageGeneration()]))
    with_images = recorder.body
    assert json.loads(plain) == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"maxOutputTokens": 50},
    }
    assert with_images["generationConfig"] == {
        "maxOutputTokens": 50,
        "responseModalities": ["TEXT", "IMAGE"],
    }


@pytest.mark.parametrize(
    ("tool", "config"),
    [
        (ImageGeneration(aspect_ratio="16:9"), {"aspectRatio": "16:9"}),
        (ImageGeneration(image_size="2K"), {"imageSize": "2K"}),
        (
            ImageGeneration(aspect_ratio="3:4", image_size="4K"),
            {"aspectRatio": "3:4", "imageSize": "4K"},
        ),
    ],
)
async def test_the_aspect_ratio_and_size_go_as_image_config(
    tool: ImageGeneration, config: dict[str, str]
) -> None:
    provider, recorder = mocked()
    await provider.complete(request(hosted_tools=[tool]))
    assert recorder.body["generationConfig"] == {
        "responseModalities": ["TEXT", "IMAGE"],
        "imageConfig": config,
    }


async def test_beside_other_hosted_tools_only_they_are_tools_entries() -> None:
    provider, recorder = mocked()
    await provider.complete(request(hosted_tools=[ImageGeneration(), WebSearch()]))
    assert recorder.body["tools"] == [{"googleSearch": {}}]
    assert recorder.body["generationConfig"]["responseModalities"] == ["TEXT", "IMAGE"]


async def test_an_image_config_in_body_defaults_wins_whole_over_the_tools() -> None:
    own = {"generationConfig": {"imageConfig": {"imageSize": "1K"}, "temperature": 0.5}}
    provider, recorder = mocked(body_defaults=own)
    tool = ImageGeneration(aspect_ratio="16:9", image_size="4K")
    await provider.complete(request(hosted_tools=[tool], max_tokens=9))
    assert recorder.body["generationConfig"] == {
        "imageConfig": {"imageSize": "1K"},
        "temperature": 0.5,
        "maxOutputTokens": 9,
        "responseModalities": ["TEXT", "IMAGE"],
    }


async def test_modalities_in_body_defaults_or_extra_win_over_the_tools() -> None:
    own = {"generationConfig": {"responseModalities": ["IMAGE"]}}
    provider, recorder = mocked(body_defaults=own)
    tool = ImageGeneration(aspect_ratio="16:9")
    await provider.complete(request(hosted_tools=[tool]))
    assert recorder.body["generationConfig"] == {
        "responseModalities": ["IMAGE"],
        "imageConfig": {"aspectRatio": "16:9"},
    }
    provider, recorder = mocked()
    extra = {"generationConfig": {"responseModalities": ["IMAGE"]}}
    await provider.complete(request(hosted_tools=[tool], extra=extra))
    assert recorder.body["generationConfig"] == {
        "responseModalities": ["IMAGE"],
        "imageConfig": {"aspectRatio": "16:9"},
    }


# --- the answer -----------------------------------------------------------------


async def test_an_image_in_the_answer_is_an_image_part_in_order_with_the_text() -> None:
    body = drawn(text("Here is a cat:"), image(), text("Enjoy."))
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content == [
        TextPart("Here is a cat:"),
        ImagePart(Base64Source(data=PNG), "image/png"),
        TextPart("Enjoy."),
    ]
    assert answer.hosted_calls == (
        HostedToolCall("image_generation", {"media_type": "image/png", "bytes": PNG_BYTES}),
    )
    assert answer.stop_reason == "end_turn"


async def test_an_answer_of_only_images_records_each_and_keeps_their_types() -> None:
    raw = b"\xff\xd8\xff\xe0JFIF-ish bytes"
    jpeg = base64.b64encode(raw).decode()
    provider, _ = mocked(json_response(drawn(image(), image(jpeg, "image/jpeg"))))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content == [
        ImagePart(Base64Source(data=PNG), "image/png"),
        ImagePart(Base64Source(data=jpeg), "image/jpeg"),
    ]
    assert [call.input for call in answer.hosted_calls] == [
        {"media_type": "image/png", "bytes": PNG_BYTES},
        {"media_type": "image/jpeg", "bytes": len(raw)},
    ]


async def test_a_streamed_image_arrives_whole_in_its_chunk_and_ends_the_same_answer() -> None:
    chunks = [
        drawn(text("Here "), finish=None, usageMetadata={"promptTokenCount": 12}),
        drawn(text("it is:"), finish=None, usageMetadata={"promptTokenCount": 12}),
        drawn(image(), finish=None, usageMetadata={"promptTokenCount": 12}),
        drawn(text("Enjoy."), finish="STOP"),
    ]
    provider, _ = mocked(sse(*chunks))
    events = [event async for event in provider.stream(request(hosted_tools=[ImageGeneration()]))]
    *deltas, final = events
    assert deltas == [TextDelta("Here "), TextDelta("it is:"), TextDelta("Enjoy.")]
    assert isinstance(final, ProviderResponse)
    assert final.content == [
        TextPart("Here it is:"),
        ImagePart(Base64Source(data=PNG), "image/png"),
        TextPart("Enjoy."),
    ]
    assert final.hosted_calls == (
        HostedToolCall("image_generation", {"media_type": "image/png", "bytes": PNG_BYTES}),
    )
    # Usage is the last chunk's: 12 in, 10 text and 1290 image tokens out.
    assert final.cost == calc_price(10, 1290, 12, IMAGE_MODEL)


async def test_a_non_image_file_is_kept_as_a_document_and_sent_back() -> None:
    wav = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVE").decode()
    body = drawn(text("Listen:"), image(wav, "audio/wav"))
    provider, recorder = mocked(json_response(body), json_response(response()))
    answer = await provider.complete(request())
    assert answer.content == [
        TextPart("Listen:"),
        DocumentPart(Base64Source(data=wav), "audio/wav"),
    ]
    assert answer.hosted_calls == ()
    history = [user("Say hi"), ProviderMessage("assistant", answer.content), user("Again")]
    await provider.complete(request(*history))
    assert recorder.body["contents"][1]["parts"] == [
        {"text": "Listen:"},
        {"inlineData": {"mimeType": "audio/wav", "data": wav}},
    ]


PART_2 = r"part 2 of the answer \(inlineData\)"
BAD_PARTS = [
    ({"inlineData": "iVBOR"}, rf"{PART_2} is str, not an object$"),
    (
        {"inlineData": {"mimeType": "image/png"}},
        rf"{PART_2} has no data as base64 text \(got none\)$",
    ),
    (
        {"inlineData": {"mimeType": "image/png", "data": 42}},
        rf"{PART_2} has no data .* \(got int 42\)$",
    ),
    (
        {"inlineData": {"mimeType": "image/png", "data": ""}},
        rf"{PART_2} has no data .* \(got str ''\)$",
    ),
    ({"inlineData": {"data": PNG}}, rf"{PART_2} has no mimeType \(got none\)$"),
    ({"inlineData": {"data": PNG, "mimeType": 7}}, rf"{PART_2} has no mimeType \(got 7\)$"),
]


@pytest.mark.parametrize(("part", "match"), BAD_PARTS)
async def test_a_malformed_inline_part_is_a_response_error_naming_it(
    part: dict[str, Any], match: str
) -> None:
    provider, _ = mocked(json_response(drawn(text("Here:"), part)))
    with pytest.raises(ProviderResponseError, match=f"^google: {match}"):
        await provider.complete(request(hosted_tools=[ImageGeneration()]))


@pytest.mark.parametrize(("part", "match"), BAD_PARTS[:2])
async def test_a_malformed_streamed_inline_part_is_a_response_error_naming_it(
    part: dict[str, Any], match: str
) -> None:
    provider, _ = mocked(sse(drawn(text("Here:"), finish=None), drawn(part)))
    with pytest.raises(ProviderResponseError, match=match):
        [event async for event in provider.stream(request(hosted_tools=[ImageGeneration()]))]


# --- thought signatures ---------------------------------------------------------


async def test_a_signed_image_keeps_its_signature_once_and_sends_it_back_byte_for_byte() -> None:
    body = drawn(text("A cat:"), image(thoughtSignature=SIGNATURE))
    provider, recorder = mocked(json_response(body), json_response(drawn(image())))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content == [
        TextPart("A cat:"),
        RawPart("google", {"thoughtSignature": SIGNATURE}),  # the signature alone, no bytes
        ImagePart(Base64Source(data=PNG), "image/png"),
    ]
    history = [user("Draw a cat"), ProviderMessage("assistant", answer.content), user("Blue")]
    await provider.complete(request(*history, hosted_tools=[ImageGeneration()]))
    assert recorder.body["contents"][1] == {
        "role": "model",
        "parts": [
            {"text": "A cat:"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}, "thoughtSignature": SIGNATURE},
        ],
    }


async def test_a_streamed_signed_image_keeps_its_signature() -> None:
    chunks = [drawn(text("A cat:"), finish=None), drawn(image(thoughtSignature=SIGNATURE))]
    provider, _ = mocked(sse(*chunks))
    *_, final = [event async for event in provider.stream(request())]
    assert isinstance(final, ProviderResponse)
    assert final.content == [
        TextPart("A cat:"),
        RawPart("google", {"thoughtSignature": SIGNATURE}),
        ImagePart(Base64Source(data=PNG), "image/png"),
    ]


async def test_a_thought_image_is_a_draft_kept_whole_when_signed_and_not_an_answer_image() -> None:
    draft = image(thought=True, thoughtSignature=SIGNATURE)
    unsigned_draft = image(thought=True)
    body = drawn(text("Sketching.", thought=True), unsigned_draft, draft, image())
    provider, recorder = mocked(json_response(body), json_response(drawn(image())))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content[1:] == [
        RawPart("google", draft),
        ImagePart(Base64Source(data=PNG), "image/png"),
    ]
    assert [call.name for call in answer.hosted_calls] == ["image_generation"]
    history = [user("Draw"), ProviderMessage("assistant", answer.content), user("Blue")]
    await provider.complete(request(*history))
    assert recorder.body["contents"][1]["parts"] == [
        draft,
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
    ]


async def test_an_image_given_by_url_in_an_assistant_message_goes_as_file_data() -> None:
    provider, recorder = mocked()
    made = ImagePart(UrlSource(url="https://example.com/cat.png"), "image/png")
    await provider.complete(
        request(user("Draw"), ProviderMessage("assistant", [made]), user("Blue"))
    )
    assert recorder.body["contents"][1]["parts"] == [
        {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.png"}}
    ]


# --- cost -----------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gemini-2.5-flash-image", "gemini-3-pro-image-preview"])
async def test_each_image_models_image_costs_its_output_image_price(model: str) -> None:
    body = drawn(text("A cat:"), image(), modelVersion=model)
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content[1] == ImagePart(Base64Source(data=PNG), "image/png")
    assert answer.cost == calc_price(10, 1290, 12, model)
    text_only = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=12, output_tokens=1300), model, provider_id="google"
    )
    assert answer.cost is not None and answer.cost.amount > text_only.total_price


async def test_gemini_2_5_flash_image_costs_30_dollars_per_million_image_tokens() -> None:
    provider, _ = mocked(json_response(drawn(image())))
    answer = await provider.complete(request())
    # 12 in at $0.30, 10 text out at $2.50 and 1290 image tokens out at $30 per million.
    assert answer.cost == Money(Decimal("0.0387286"), "USD")


async def test_prices_output_image_mtok_prices_the_images_apart_else_they_are_output() -> None:
    entry = {"input_mtok": "1", "output_mtok": "2", "output_image_mtok": "40"}
    provider, _ = mocked(json_response(drawn(image())), prices={IMAGE_MODEL: entry})
    answer = await provider.complete(request())
    # 12 in at $1, 10 text out at $2 and 1290 image tokens out at $40 per million.
    assert answer.cost == Money(Decimal("0.051632"), "USD")
    own = GenaiModelPrice(
        input_mtok=Decimal(1), output_mtok=Decimal(2), output_image_mtok=Decimal(40)
    ).calc_price(genai_prices.Usage(input_tokens=12, output_tokens=1300, output_image_tokens=1290))
    assert answer.cost == Money(own["total_price"], "USD")
    del entry["output_image_mtok"]  # without it, an image token is an output token
    provider, _ = mocked(json_response(drawn(image())), prices={IMAGE_MODEL: entry})
    answer = await provider.complete(request())
    assert answer.cost == Money(Decimal("0.002612"), "USD")  # (12 * 1 + 1300 * 2) / 1e6


def test_output_image_mtok_is_checked_as_the_other_prices_are() -> None:
    prices = parse_prices({"m": {"input_mtok": "1", "output_mtok": "2", "output_image_mtok": 30}})
    assert prices["m"].output_image_mtok == Decimal(30)
    with pytest.raises(ValueError, match=r"\['output_image_mtok'\] must be a decimal string"):
        parse_prices({"m": {"input_mtok": "1", "output_mtok": "2", "output_image_mtok": 30.0}})  # type: ignore[dict-item]


# --- whole turns ----------------------------------------------------------------


async def test_a_turn_returns_the_image_and_the_next_turn_sends_it_back_for_an_edit() -> None:
    first = drawn(text("A red cat:"), image(thoughtSignature=SIGNATURE))
    blue = base64.b64encode(b"a blue cat").decode()
    second = drawn(image(blue))
    recorder = Recorder(json_response(first), json_response(second))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GoogleProvider(IMAGE_MODEL, api_key=KEY, client=client)
    store = InMemoryStore()
    config = NeuronTurnConfig(hosted_tools=[ImageGeneration(aspect_ratio="1:1")])
    turn = NeuronTurn(provider, config=config, state=store)
    agent = LocalOrchestrator({"artist": turn}, store)

    made = await agent.dispatch(
        "artist", TurnInput(message="Draw a cat", trigger="user", session="s")
    )
    edited = await agent.dispatch(
        "artist", TurnInput(message="Make it blue", trigger="user", session="s")
    )

    images = [block for block in made.message.blocks if isinstance(block, ImageBlock)]
    assert images == [ImageBlock(source=Base64Source(data=PNG), media_type="image/png")]
    assert made.message.as_text() == "A red cat:"
    assert made.metadata.cost == calc_price(10, 1290, 12, IMAGE_MODEL)
    sent_first, sent_second = (json.loads(sent.content) for sent in recorder.requests)
    assert sent_first["generationConfig"]["imageConfig"] == {"aspectRatio": "1:1"}
    assert sent_second["contents"] == [
        {"role": "user", "parts": [{"text": "Draw a cat"}]},
        {
            "role": "model",
            "parts": [
                {"text": "A red cat:"},
                {
                    "inlineData": {"mimeType": "image/png", "data": PNG},
                    "thoughtSignature": SIGNATURE,
                },
            ],
        },
        {"role": "user", "parts": [{"text": "Make it blue"}]},
    ]
    (edit,) = edited.message.blocks
    assert edit == ImageBlock(source=Base64Source(data=blue), media_type="image/png")
    await client.aclose()


async def test_a_streamed_turn_returns_the_image_priced_from_the_last_chunk() -> None:
    chunks = [
        drawn(text("A cat:"), finish=None, usageMetadata={"promptTokenCount": 12}),
        drawn(image(thoughtSignature=SIGNATURE), finish="STOP"),
    ]
    recorder = Recorder(sse(*chunks))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GoogleProvider(IMAGE_MODEL, api_key=KEY, client=client, stream=True)
    config = NeuronTurnConfig(hosted_tools=[ImageGeneration()])
    turn = NeuronTurn(provider, config=config)

    output = await turn.execute(TurnInput(message="Draw a cat", trigger="user"))

    assert recorder.requests[0].url.params["alt"] == "sse"
    assert [block for block in output.message.blocks if isinstance(block, ImageBlock)] == [
        ImageBlock(source=Base64Source(data=PNG), media_type="image/png")
    ]
    assert output.metadata.cost == calc_price(10, 1290, 12, IMAGE_MODEL)
    await client.aclose()
