"""Images the Responses API's `image_generation` tool makes (`ImageGeneration`).

The request's tool entry for each setting, refusals when a turn is made, the answer's
images (plain and streamed, from hand-written cassettes), their record, their fee, and
how they go back on the next call.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from moneyed import Money

from layer0 import Base64Source, ImageBlock, LogLevel, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_provider_openai import _responses_wire as wire
from neuron_turn import ImageGeneration, NeuronTurn, NeuronTurnConfig
from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.hosted_tools import (
    UnsupportedHostedToolError,
    check_hosted_tools,
    hosted_tool_from_json,
    hosted_tool_json,
)
from neuron_turn.loop.provider import (
    ImagePart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RawPart,
    TextPart,
)
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderResponseError
from tests.cassettes import CASSETTES, replay
from tests.unpriced_searches import warnings_of

from .._http_provider_support import user
from ._responses_support import ANSWERED, message, mocked, response, sse, usage
from ._support import KEY, Recorder, json_response, request
from .test_responses_streaming import CREATED, collect

HERE = CASSETTES / "openai_responses"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
"""A 1x1 PNG, base64 as the API sends it."""
PNG_BYTES = len(base64.b64decode(PNG))
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\x00" * 20).decode()
PROMPT = "A red cat sitting on a windowsill, flat illustration"


def image_call(
    result: str | None = PNG, *, item_id: str = "ig_1", status: str = "completed", **fields: Any
) -> dict[str, Any]:
    """A finished `image_generation_call` output item, shaped like openai-python's type."""
    item: dict[str, Any] = {
        "id": item_id,
        "type": "image_generation_call",
        "status": status,
        "result": result,
        "revised_prompt": PROMPT,
        "output_format": "png",
        "quality": "low",
        "size": "1024x1024",
        "background": "opaque",
    }
    item.update(fields)
    return item


def drawn(*items: dict[str, Any]) -> dict[str, Any]:
    """A response holding `items`, then a short message."""
    return response(*items, message("Here is your cat."), usage=usage(30, 12))


# --- the request --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "entry"),
    [
        (ImageGeneration(), {"type": "image_generation"}),
        (ImageGeneration(aspect_ratio="1:1"), {"type": "image_generation", "size": "1024x1024"}),
        (ImageGeneration(aspect_ratio="3:2"), {"type": "image_generation", "size": "1536x1024"}),
        (ImageGeneration(aspect_ratio="2:3"), {"type": "image_generation", "size": "1024x1536"}),
        (ImageGeneration(quality="high"), {"type": "image_generation", "quality": "high"}),
        (
            ImageGeneration(output_format="webp", output_compression=80),
            {"type": "image_generation", "output_format": "webp", "output_compression": 80},
        ),
        (
            ImageGeneration(background="transparent", output_format="png"),
            {"type": "image_generation", "output_format": "png", "background": "transparent"},
        ),
        (ImageGeneration(moderation="low"), {"type": "image_generation", "moderation": "low"}),
        (
            ImageGeneration(model="gpt-image-1-mini"),
            {"type": "image_generation", "model": "gpt-image-1-mini"},
        ),
    ],
)
async def test_each_setting_is_sent_as_the_image_tools_own(
    tool: ImageGeneration, entry: dict[str, Any]
) -> None:
    provider, recorder = mocked(json_response(drawn(image_call())))
    await provider.complete(request(hosted_tools=[tool]))
    assert recorder.body["tools"] == [entry]
    assert "partial_images" not in recorder.body["tools"][0]


async def test_an_image_size_or_ratio_the_tool_has_no_size_for_is_refused_before_the_call() -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match=r"image_size .*got '2K'"):
        await provider.complete(request(hosted_tools=[ImageGeneration(image_size="2K")]))
    with pytest.raises(InvalidRequestError, match=r"aspect_ratio 1:1, 2:3, 3:2; got '16:9'"):
        await provider.complete(request(hosted_tools=[ImageGeneration(aspect_ratio="16:9")]))
    assert recorder.requests == []


def test_a_turn_with_a_ratio_openai_has_no_size_for_is_refused_naming_those_it_takes() -> None:
    provider, _ = mocked()
    with pytest.raises(UnsupportedHostedToolError) as refused:
        NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[ImageGeneration("16:9")]))
    assert str(refused.value) == (
        "the provider OpenAIResponsesProvider takes ImageGeneration.aspect_ratio "
        "1:1, 2:3, 3:2; got '16:9'"
    )


def test_a_turn_with_geminis_image_size_over_openai_is_refused() -> None:
    provider, _ = mocked()
    with pytest.raises(UnsupportedHostedToolError, match=r"no ImageGeneration.image_size"):
        NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[ImageGeneration(None, "2K")]))


class _Gemini:
    """A provider that runs image generation and says nothing of its settings (Gemini's)."""

    hosted_tools = frozenset({"image_generation"})


@pytest.mark.parametrize(
    "tool",
    [
        ImageGeneration(quality="high"),
        ImageGeneration(output_format="jpeg"),
        ImageGeneration(background="opaque"),
        ImageGeneration(moderation="low"),
        ImageGeneration(model="gpt-image-1-mini"),
    ],
)
def test_an_openai_setting_is_refused_over_a_provider_that_has_none(tool: ImageGeneration) -> None:
    option = next(iter(tool.settings()))
    with pytest.raises(UnsupportedHostedToolError) as refused:
        check_hosted_tools([tool], provider=_Gemini(), function_tools=())
    assert str(refused.value) == (
        f"the provider _Gemini has no ImageGeneration.{option} setting "
        "(it takes: aspect_ratio, image_size)"
    )


def test_geminis_own_settings_still_pass_over_a_provider_that_says_nothing() -> None:
    tool = ImageGeneration(aspect_ratio="16:9", image_size="4K")
    check_hosted_tools([tool], provider=_Gemini(), function_tools=())


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"quality": "ultra"}, "ImageGeneration.quality is one of low, medium, high, auto"),
        ({"output_format": "bmp"}, "ImageGeneration.output_format is one of png, jpeg, webp"),
        ({"background": "clear"}, "ImageGeneration.background is one of"),
        ({"moderation": "off"}, "ImageGeneration.moderation is one of auto, low"),
        (
            {"output_format": "jpeg", "output_compression": 101},
            "ImageGeneration.output_compression is an int from 0 to 100",
        ),
        (
            {"output_format": "jpeg", "output_compression": True},
            "ImageGeneration.output_compression is an int from 0 to 100",
        ),
        ({"output_compression": 50}, "output_compression compresses jpeg and webp images"),
        (
            {"output_format": "jpeg", "background": "transparent"},
            "background 'transparent' needs output_format png or webp",
        ),
        ({"model": "gpt image"}, "ImageGeneration.model is an image model's name"),
        ({"model": ""}, "ImageGeneration.model is an image model's name"),
    ],
)
def test_a_bad_setting_is_refused_when_made_naming_itself(
    fields: dict[str, Any], named: str
) -> None:
    with pytest.raises(UnsupportedHostedToolError, match=named.replace(".", r"\.")):
        ImageGeneration(**fields)


def test_the_json_form_carries_the_new_settings_and_older_json_still_reads() -> None:
    tool = ImageGeneration(
        aspect_ratio="3:2",
        quality="medium",
        output_format="webp",
        background="auto",
        output_compression=70,
        moderation="low",
        model="gpt-image-1-mini",
    )
    data = hosted_tool_json(tool)
    assert data == {
        "name": "image_generation",
        "aspect_ratio": "3:2",
        "quality": "medium",
        "output_format": "webp",
        "background": "auto",
        "output_compression": 70,
        "moderation": "low",
        "model": "gpt-image-1-mini",
    }
    assert hosted_tool_from_json(json.loads(json.dumps(data))) == tool
    old = {"name": "image_generation", "aspect_ratio": "16:9", "image_size": "2K"}
    assert hosted_tool_from_json(old) == ImageGeneration("16:9", "2K")
    with pytest.raises(UnsupportedHostedToolError, match="quality is one of"):
        hosted_tool_from_json({"name": "image_generation", "quality": "best"})


# --- the answer (cassettes) -----------------------------------------------------------


async def test_an_image_the_tool_made_is_in_the_answer_in_its_place(api_key: str) -> None:
    req = ProviderRequest(
        "gpt-5-mini",
        [user("Draw a red cat.")],
        hosted_tools=[ImageGeneration(quality="low", model="gpt-image-1-mini")],
    )
    with replay(HERE / "image_generation.yaml"):
        async with OpenAIResponsesProvider("gpt-5-mini") as provider:
            answer = await provider.complete(req)
    assert answer.content == [
        RawPart("openai-responses", {"type": "image_generation_call", "id": "ig_0a1b2c3d4e5f"}),
        ImagePart(Base64Source(data=PNG), "image/png"),
        TextPart("Here is a red cat on a windowsill."),
    ]
    (call,) = answer.hosted_calls
    assert (call.name, call.input) == (
        "image_generation",
        {
            "media_type": "image/png",
            "bytes": PNG_BYTES,
            "revised_prompt": PROMPT,
            "quality": "low",
            "size": "1024x1024",
            "status": "completed",
            "error": None,
        },
    )
    assert PNG not in json.dumps(call.input)


async def test_a_streamed_image_comes_whole_when_its_call_completes(api_key: str) -> None:
    req = ProviderRequest("gpt-5-mini", [user("Draw a red cat.")], hosted_tools=[ImageGeneration()])
    with replay(HERE / "image_generation_streamed.yaml"):
        async with OpenAIResponsesProvider("gpt-5-mini", stream=True) as provider:
            events = [event async for event in provider.stream(req)]
    *deltas, answer = events
    assert deltas == [TextDelta("Here is "), TextDelta("your cat.")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [
        RawPart("openai-responses", {"type": "image_generation_call", "id": "ig_0a1b2c3d4e60"}),
        ImagePart(Base64Source(data=PNG), "image/png"),
        TextPart("Here is your cat."),
    ]
    assert [call.name for call in answer.hosted_calls] == ["image_generation"]


async def test_a_partial_image_is_a_draft_no_delta_carries_and_the_answer_leaves_out() -> None:
    draft = base64.b64encode(b"\x89PNG draft").decode()
    events = [
        CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": image_call(None)},
        {"type": "response.image_generation_call.generating", "output_index": 0},
        {
            "type": "response.image_generation_call.partial_image",
            "output_index": 0,
            "item_id": "ig_1",
            "partial_image_index": 0,
            "partial_image_b64": draft,
        },
        {"type": "response.image_generation_call.completed", "output_index": 0},
        {"type": "response.output_item.done", "output_index": 0, "item": image_call()},
        {"type": "response.completed", "response": drawn(image_call())},
    ]
    provider, _ = mocked(sse(*events))
    deltas, answer = await collect(provider, request(hosted_tools=[ImageGeneration()]))
    assert deltas == []
    assert answer.content[1] == ImagePart(Base64Source(data=PNG), "image/png")
    assert draft not in repr(answer)


async def test_a_turn_returns_the_image_in_its_message_and_history_as_a_note_unstored() -> None:
    recorder = Recorder(
        json_response(drawn(image_call())), json_response(response(message("Done.")))
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY, client=client)
    store = InMemoryStore()
    turn = NeuronTurn(
        provider, config=NeuronTurnConfig(hosted_tools=[ImageGeneration()]), state=store
    )
    agent = LocalOrchestrator({"artist": turn}, store)

    made = await agent.dispatch("artist", TurnInput(message="Draw", trigger="user", session="s"))
    await agent.dispatch("artist", TurnInput(message="Bluer", trigger="user", session="s"))

    images = [block for block in made.message.blocks if isinstance(block, ImageBlock)]
    assert images == [ImageBlock(source=Base64Source(data=PNG), media_type="image/png")]
    assert made.message.as_text() == "Here is your cat."
    second = json.loads(recorder.requests[1].content)
    assert second["input"][1] == {
        "role": "assistant",
        "content": "[Here the assistant made an image (image/png), which is not shown again]\n"
        "Here is your cat.",
    }
    assert "image_generation_call" not in recorder.requests[1].content.decode()
    await client.aclose()


# --- history ----------------------------------------------------------------------------


async def test_a_stored_call_sends_the_image_back_by_its_calls_id_and_no_note() -> None:
    """Another provider's image (no call before it) is still a note there."""
    provider, recorder = mocked(
        json_response(drawn(image_call())),
        json_response(response()),
        body_defaults={"store": True},
    )
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    other = ImagePart(Base64Source(data=PNG), "image/png")
    content = [*answer.content, other]
    history = [user("Draw"), ProviderMessage("assistant", content), user("Bluer")]
    await provider.complete(request(*history, hosted_tools=[ImageGeneration()]))
    assert recorder.body["input"][1:3] == [
        {"type": "image_generation_call", "id": "ig_1"},
        {
            "role": "assistant",
            "content": "Here is your cat.\n"
            "[Here the assistant made an image (image/png), which is not shown again]",
        },
    ]


# --- odd answers ------------------------------------------------------------------------


async def test_a_result_that_is_not_base64_fails_the_call_naming_the_item() -> None:
    provider, _ = mocked(json_response(drawn(image_call("not base64 at all!"))))
    with pytest.raises(ProviderResponseError, match=r"'ig_1' has a result that is not base64"):
        await provider.complete(request(hosted_tools=[ImageGeneration()]))


@pytest.mark.parametrize(
    ("item", "note"),
    [
        (image_call(None), "[The image generation call ig_1 made no image: status 'completed']"),
        (image_call(""), "[The image generation call ig_1 made no image: status 'completed']"),
        (
            image_call(
                None,
                status="failed",
                error={"type": "image_generation_user_error", "message": "moderation_blocked"},
            ),
            "[The image generation call ig_1 made no image: moderation_blocked]",
        ),
        (image_call(42), "[The image generation call ig_1 made no image: status 'completed']"),
    ],
)
async def test_a_call_that_made_no_image_is_a_note_in_its_place(
    item: dict[str, Any], note: str
) -> None:
    provider, _ = mocked(json_response(drawn(item)))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content[1:] == [TextPart(note), TextPart("Here is your cat.")]
    assert answer.hosted_calls[0].input["bytes"] is None  # type: ignore[index,call-overload]


async def test_an_oversized_image_is_left_out_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wire, "MAX_IMAGE_BASE64", 16)
    provider, _ = mocked(json_response(drawn(image_call())))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    note = answer.content[1]
    assert isinstance(note, TextPart) and "it is left out" in note.text
    assert not any(isinstance(part, ImagePart) for part in answer.content)


async def test_the_media_type_is_the_items_format_else_the_images_own_bytes() -> None:
    provider, _ = mocked(
        json_response(drawn(image_call(JPEG, output_format="jpeg"))),
        json_response(drawn(image_call(JPEG, output_format=None))),
        json_response(drawn(image_call(PNG, output_format=None))),
    )
    types = []
    for _ in range(3):
        answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
        types.append(answer.content[1].media_type)  # type: ignore[union-attr]
    assert types == ["image/jpeg", "image/jpeg", "image/png"]


async def test_an_answer_of_only_an_image_is_an_answer() -> None:
    provider, _ = mocked(json_response(response(image_call())))
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.content[1] == ImagePart(Base64Source(data=PNG), "image/png")
    assert answer.stop_reason == "end_turn"


# --- cost --------------------------------------------------------------------------------


async def tokens_only_cost() -> Money:
    """The cost of `drawn`'s usage with no image in it (the fee's baseline)."""
    provider, _ = mocked(json_response(response(message("Here is your cat."), usage=usage(30, 12))))
    cost = (await provider.complete(request())).cost
    assert cost is not None and cost.amount > 0
    return cost


async def test_an_image_of_a_priced_model_quality_and_size_adds_its_fee() -> None:
    baseline = await tokens_only_cost()
    tool = ImageGeneration(quality="low", model="gpt-image-1-mini", aspect_ratio="1:1")
    provider, _ = mocked(json_response(drawn(image_call(), image_call(item_id="ig_2"))))
    answer = await provider.complete(request(hosted_tools=[tool]))
    assert answer.cost == baseline + Money(Decimal("0.010"), "USD")  # 2 x $0.005


async def test_the_quality_and_size_the_item_reports_win_over_auto() -> None:
    baseline = await tokens_only_cost()
    tool = ImageGeneration(quality="auto", model="gpt-image-1-mini")
    made = image_call(quality="high", size="1536x1024")
    provider, _ = mocked(json_response(drawn(made)))
    answer = await provider.complete(request(hosted_tools=[tool]))
    assert answer.cost == baseline + Money(Decimal("0.052"), "USD")


async def test_a_streamed_images_fee_is_in_the_final_cost() -> None:
    baseline = await tokens_only_cost()
    tool = ImageGeneration(quality="medium", model="gpt-image-1-mini")
    done = {"type": "response.completed", "response": drawn(image_call(quality="medium"))}
    provider, _ = mocked(sse(CREATED, done))
    _, answer = await collect(provider, request(hosted_tools=[tool]))
    assert answer.cost == baseline + Money(Decimal("0.011"), "USD")


@pytest.mark.parametrize(
    ("tool", "made"),
    [
        (ImageGeneration(), image_call()),  # the image model the API picked: unknown
        (ImageGeneration(model="gpt-image-2"), image_call()),  # no price per image
        (ImageGeneration(model="gpt-image-1-mini"), image_call(quality="auto")),
        (ImageGeneration(model="gpt-image-1-mini"), image_call(size="1536x864")),
    ],
)
async def test_an_image_no_price_covers_is_left_out_of_the_cost_and_counted_unpriced(
    tool: ImageGeneration, made: dict[str, Any]
) -> None:
    baseline = await tokens_only_cost()
    provider, _ = mocked(json_response(drawn(made)))
    answer = await provider.complete(request(hosted_tools=[tool]))
    assert answer.cost == baseline
    assert answer.unpriced_images == 1  # the loop warns of it: never counted as free


async def test_each_turn_warns_of_the_images_no_price_covers_as_its_call_ends() -> None:
    tool = ImageGeneration()  # the image model the API picks: no price per image known
    recorder = Recorder(
        json_response(drawn(image_call(), image_call(item_id="ig_2"))),
        json_response(drawn(image_call(item_id="ig_3"))),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY, client=client)
    turn = NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[tool]))

    first = await turn.execute(TurnInput(message="Draw two", trigger="user"))
    output = await turn.execute(TurnInput(message="One more", trigger="user"))
    await client.aclose()

    assert warnings_of(first) == [
        (
            LogLevel.WARN,
            f"image generation price unknown for model {ANSWERED!r}; its 2 images are not "
            "counted in the cost",
            {"model": ANSWERED, "images": 2},
        )
    ]
    assert [message for _, message, _ in warnings_of(output)] == [
        f"image generation price unknown for model {ANSWERED!r}; its 1 image is not counted "
        "in the cost"
    ]


async def test_a_self_hosted_servers_images_cost_nothing_and_warn_of_nothing() -> None:
    provider, _ = mocked(json_response(drawn(image_call())), base_url="http://127.0.0.1:9/v1")
    answer = await provider.complete(request(hosted_tools=[ImageGeneration()]))
    assert answer.cost == Money(0, "USD")
    assert answer.unpriced_images == 0


@pytest.mark.parametrize(
    ("tool", "unpriced"),
    [
        (ImageGeneration(quality="medium", model="gpt-image-1-mini"), 0),  # OpenAI's table
        (ImageGeneration(), 1),  # the image model the gateway picks: no price known
    ],
)
async def test_behind_a_gateway_with_prices_an_image_is_priced_or_counted_never_free(
    tool: ImageGeneration, unpriced: int
) -> None:
    own_prices = {ANSWERED: {"input_mtok": "1", "output_mtok": "2"}}
    made = drawn(image_call(quality="medium"))
    plain, _ = mocked(json_response(made), base_url=GATEWAY, prices=own_prices)
    tokens_only = (await plain.complete(request())).cost
    provider, _ = mocked(json_response(made), base_url=GATEWAY, prices=own_prices)

    answer = await provider.complete(request(hosted_tools=[tool]))

    assert tokens_only is not None and answer.cost is not None
    fee = answer.cost - tokens_only
    assert (fee, answer.unpriced_images) == (
        (Money(Decimal("0.011"), "USD"), 0) if not unpriced else (Money(0, "USD"), 1)
    )


GATEWAY = "https://gateway.example/v1"
"""A base URL of the caller's own in front of OpenAI: no price is looked up for it."""
