"""`LocalProvider` on replayed and scripted server answers: request shape, reading, retries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from moneyed import Money

from layer0 import Base64Source, UrlSource
from neuron_provider_local import DEFAULT_MAX_TOKENS, LocalProvider
from neuron_tool import ToolSchema
from neuron_turn.loop.effect_tools import effect_tool_schemas
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderServerError
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import (
    BASE_URL,
    case,
    completion,
    recorded,
    replay_client,
    scripted_client,
    server_error,
    tool,
    user,
)

SERVED = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
CALL_TEXT = '{"name": "calculator", "arguments": {"expression": "17*23"}}'
BROKEN_CALL = '{"name": "calculator", "arguments": {"expression": "17*23"}'


async def replayed(name: str) -> tuple[ProviderResponse, list[dict[str, Any]]]:
    """Run recorded case `name` against its recorded answers; every one must be used."""
    client, replay = replay_client(recorded()[name])
    async with client, LocalProvider(SERVED, base_url=BASE_URL, client=client) as provider:
        response = await provider.complete(case(name).request())
    assert replay.all_played
    return response, replay.bodies


def scripted(*answers: tuple[int, dict[str, Any]]) -> tuple[httpx.AsyncClient, list[Any]]:
    queue: Iterator[tuple[int, dict[str, Any]]] = iter(answers)

    def answer(body: dict[str, Any]) -> httpx.Response:
        status, content = next(queue)
        return httpx.Response(status, json=content)

    return scripted_client(answer)


def calculator_request(**fields: Any) -> ProviderRequest:
    fields.setdefault("tools", [tool("calculator")])
    return ProviderRequest(model="default", messages=[user("What is 17*23?")], **fields)


async def complete_with(
    client: httpx.AsyncClient, request: ProviderRequest, **options: Any
) -> ProviderResponse:
    async with client, LocalProvider(SERVED, base_url=BASE_URL, client=client, **options) as p:
        return await p.complete(request)


# --- recorded answers of the default model ----------------------------------


async def test_a_call_parsed_by_the_server_comes_back_as_a_tool_use() -> None:
    response, bodies = await replayed("calculator_call")
    (part,) = response.content
    assert isinstance(part, ToolUsePart)
    assert (part.name, part.input) == ("calculator", {"expression": "17*23"})
    assert response.stop_reason == "tool_use"
    assert response.model == SERVED
    assert response.cost == Money(0, "USD")
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    (body,) = bodies
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert [t["function"]["name"] for t in body["tools"]] == ["calculator"]
    assert "tool_choice" not in body


async def test_the_answer_after_a_result_is_text() -> None:
    response, _ = await replayed("calculator_answer")
    assert response.content == [TextPart("17 multiplied by 23 equals 391.")]
    assert response.stop_reason == "end_turn"


async def test_a_corrected_call_after_a_failure() -> None:
    response, _ = await replayed("power_error_corrected")
    (part,) = response.content
    assert isinstance(part, ToolUsePart) and part.input == {"expression": "2**10"}


async def test_an_unreadable_output_is_retried_raw_once_then_returned_as_text() -> None:
    response, bodies = await replayed("joke_made_up_tool")
    first, retry = bodies
    assert "tool_choice" not in first
    assert retry == {**first, "tool_choice": "none"}
    (part,) = response.content
    assert isinstance(part, TextPart)
    assert part.text.startswith('{"name": "Joke", "arguments": {"joke": "Why did the tomato')
    assert response.stop_reason == "end_turn"
    # The 500 reported no usage: only the retry's tokens are known.
    assert response.usage == TokenUsage(
        input_tokens=recorded()["joke_made_up_tool"][1]["response"]["usage"]["prompt_tokens"],
        output_tokens=recorded()["joke_made_up_tool"][1]["response"]["usage"]["completion_tokens"],
        cache_read_tokens=response.usage.cache_read_tokens,
    )


async def test_a_call_written_as_text_is_read_as_a_tool_use() -> None:
    response, bodies = await replayed("calculator_call_raw")
    (part,) = response.content
    assert isinstance(part, ToolUsePart)
    assert (part.name, part.input) == ("calculator", {"expression": "17*23"})
    assert part.id.startswith("call_")
    assert response.stop_reason == "tool_use"
    assert len(bodies) == 1


async def test_a_truncated_call_is_not_retried() -> None:
    response, bodies = await replayed("truncated_raw")
    assert response.stop_reason == "max_tokens"
    assert response.content == [TextPart('{"name": "calculator", "arguments')]
    assert len(bodies) == 1


async def test_plain_text_with_tools_offered_stays_text() -> None:
    response, _ = await replayed("capital_plain_text")
    assert response.content == [TextPart("The capital of France is Paris.")]


async def test_without_tools_the_answer_is_passed_through() -> None:
    response, bodies = await replayed("no_tools")
    assert response.content == [TextPart("Hello, world!")]
    assert "tools" not in bodies[0]


# --- scripted answers: the retry rules --------------------------------------


async def test_a_broken_call_in_the_text_is_retried_and_the_retry_read_leniently() -> None:
    client, bodies = scripted(
        (200, completion(BROKEN_CALL, prompt_tokens=100, completion_tokens=20)),
        (200, completion(f"```json\n{CALL_TEXT}\n```", prompt_tokens=100, completion_tokens=25)),
    )
    response = await complete_with(client, calculator_request())
    (part,) = response.content
    assert isinstance(part, ToolUsePart) and part.input == {"expression": "17*23"}
    assert response.stop_reason == "tool_use"
    assert response.usage.input_tokens == 200 and response.usage.output_tokens == 45
    assert [b.get("tool_choice") for b in bodies] == [None, "none"]


async def test_a_call_that_stays_broken_is_returned_as_the_model_s_text() -> None:
    client, bodies = scripted((200, completion(BROKEN_CALL)), (200, completion(BROKEN_CALL)))
    response = await complete_with(client, calculator_request())
    assert response.content == [TextPart(BROKEN_CALL)]
    assert response.stop_reason == "end_turn"
    assert len(bodies) == 2  # retried once, not more


async def test_a_server_500_is_retried_raw_and_a_call_in_the_raw_text_is_used() -> None:
    client, bodies = scripted((500, server_error()), (200, completion(CALL_TEXT)))
    response = await complete_with(client, calculator_request())
    assert isinstance(response.content[0], ToolUsePart)
    assert [b.get("tool_choice") for b in bodies] == [None, "none"]


async def test_a_500_on_the_retry_too_is_raised_as_the_server_error() -> None:
    client, _ = scripted((500, server_error()), (500, server_error()))
    with pytest.raises(ProviderServerError) as caught:
        await complete_with(client, calculator_request())
    assert caught.value.provider == "local"
    assert str(caught.value).startswith("local: HTTP 500")
    assert caught.value.retryable


async def test_a_500_without_tools_is_not_a_parsing_failure_and_is_raised() -> None:
    client, bodies = scripted((500, server_error()))
    request = ProviderRequest(model="default", messages=[user("Hi")])
    with pytest.raises(ProviderServerError):
        await complete_with(client, request)
    assert len(bodies) == 1


# --- request shape ------------------------------------------------------------


async def test_effect_tools_are_not_shown_to_the_model_by_default() -> None:
    effect = list(effect_tool_schemas())
    client, bodies = scripted((200, completion("Hi")), (200, completion("Hi")))
    request = calculator_request(tools=[tool("calculator"), *effect])
    async with client:
        async with LocalProvider(SERVED, base_url=BASE_URL, client=client) as provider:
            await provider.complete(request)
        async with LocalProvider(
            SERVED, base_url=BASE_URL, client=client, effect_tools=True
        ) as provider:
            await provider.complete(request)
    names = [[t["function"]["name"] for t in body["tools"]] for body in bodies]
    assert names[0] == ["calculator"]
    assert names[1] == ["calculator", *(schema.name for schema in effect)]


@pytest.mark.parametrize(
    ("asked", "options", "sent"),
    [
        (None, {}, DEFAULT_MAX_TOKENS),
        (4096, {}, DEFAULT_MAX_TOKENS),
        (64, {}, 64),
        (None, {"max_tokens": 900}, 900),
    ],
)
async def test_max_tokens_is_capped(asked: int | None, options: dict[str, Any], sent: int) -> None:
    client, bodies = scripted((200, completion("Hi")))
    await complete_with(client, calculator_request(max_tokens=asked), **options)
    assert bodies[0]["max_tokens"] == sent


@pytest.mark.parametrize(
    ("asked", "options", "sent"),
    [(None, {}, 0.0), (0.7, {}, 0.7), (None, {"temperature": 0.3}, 0.3)],
)
async def test_temperature_defaults_to_zero(
    asked: float | None, options: dict[str, Any], sent: float
) -> None:
    client, bodies = scripted((200, completion("Hi")))
    await complete_with(client, calculator_request(temperature=asked), **options)
    assert bodies[0]["temperature"] == sent


async def test_the_served_model_is_named_and_extra_fields_pass_through() -> None:
    client, bodies = scripted((200, completion("Hi")))
    await complete_with(client, calculator_request(extra={"seed": 7}))
    assert bodies[0]["model"] == SERVED
    assert bodies[0]["seed"] == 7
    assert bodies[0]["messages"][0] == {"role": "user", "content": "What is 17*23?"}


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(UrlSource(url="https://example.com/cat.png"), "image/png"),
        DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf"),
    ],
    ids=["image", "document"],
)
async def test_images_and_documents_are_refused_before_any_request(
    part: ImagePart | DocumentPart,
) -> None:
    client, bodies = scripted()
    request = ProviderRequest(model="default", messages=[ProviderMessage("user", [part])])
    with pytest.raises(InvalidRequestError, match="reads text only; remove the images and"):
        await complete_with(client, request)
    assert bodies == []


async def test_a_tool_results_files_are_notes_in_its_text_not_a_refusal() -> None:
    client, bodies = scripted((200, completion("A login page.")))
    shot = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    report = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "q3.pdf")
    request = ProviderRequest(
        model="default",
        messages=[
            user("What is on screen?"),
            ProviderMessage("assistant", [ToolUsePart("call_1", "screenshot", {})]),
            ProviderMessage("user", [ToolResultPart("call_1", "captured", files=(shot, report))]),
        ],
    )
    await complete_with(client, request)
    assert bodies[0]["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "captured\n"
            f"[The tool returned an image (image/png), which is not shown: {SERVED} reads "
            "text only]\n"
            "[The tool returned the document q3.pdf (application/pdf), which is not shown: "
            f"{SERVED} reads text only]",
        }
    ]


async def test_an_image_another_model_made_is_a_note_in_its_message_not_a_refusal() -> None:
    client, bodies = scripted((200, completion("A cat, drawn.")))
    made = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    request = ProviderRequest(
        model="default",
        messages=[
            user("Draw a cat"),
            ProviderMessage("assistant", [TextPart("Here:"), made]),
            user("What did you draw?"),
        ],
    )
    await complete_with(client, request)
    assert bodies[0]["messages"][1] == {
        "role": "assistant",
        "content": "Here:\n[Here the assistant made an image (image/png), which is not shown "
        "again]",
    }


async def test_with_a_base_url_nothing_is_started_and_the_client_stays_open() -> None:
    client, _ = scripted((200, completion("Hi")))
    provider = LocalProvider("some-model", base_url=BASE_URL, client=client)
    assert provider.base_url == BASE_URL
    assert provider.served_model == "some-model"
    assert provider.server is None
    await provider.complete(calculator_request())
    await provider.aclose()
    assert not client.is_closed
    await client.aclose()


def test_repr_names_the_model_and_where_it_is_served() -> None:
    provider = LocalProvider("m.gguf", base_url=BASE_URL)
    assert repr(provider) == f"LocalProvider(model='m.gguf', served='m.gguf', at='{BASE_URL}')"


def test_tool_schemas_used_here_are_the_plugin_tools() -> None:
    assert isinstance(tool("calculator"), ToolSchema)
    assert json.dumps(tool("calculator").input_schema)


# --- typed answers and tool choice --------------------------------------------

ANSWER = OutputSchema(
    "Answer",
    {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": False,
    },
    strict=True,
)
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "Answer", "schema": ANSWER.schema, "strict": True},
}


async def test_a_typed_answer_without_tools_is_sent_with_the_schema_grammar() -> None:
    client, bodies = scripted((200, completion('{"answer": 391}')))
    await complete_with(client, calculator_request(tools=[], output=ANSWER))
    assert bodies[0]["response_format"] == RESPONSE_FORMAT
    assert "tools" not in bodies[0]


async def test_while_a_tool_may_be_called_the_schema_is_held_back() -> None:
    # The grammar would leave the model no way to write a call.
    client, bodies = scripted((200, completion(CALL_TEXT)))
    await complete_with(client, calculator_request(output=ANSWER))
    assert "response_format" not in bodies[0]
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["calculator"]


async def test_after_successful_tool_results_the_answer_is_constrained_without_tools() -> None:
    messages = [
        user("What is 17*23?"),
        ProviderMessage("assistant", [ToolUsePart("c1", "calculator", {"expression": "17*23"})]),
        ProviderMessage("user", [ToolResultPart("c1", "391")]),
    ]
    client, bodies = scripted((200, completion('{"answer": 391}')))
    request = calculator_request(output=ANSWER, tool_choice=ToolChoice.AUTO)
    await complete_with(client, replace(request, messages=messages))
    assert bodies[0]["response_format"] == RESPONSE_FORMAT
    assert "tools" not in bodies[0] and "tool_choice" not in bodies[0]


async def test_after_a_failed_tool_call_the_model_may_call_again() -> None:
    messages = [
        user("What is 17*23?"),
        ProviderMessage("assistant", [ToolUsePart("c1", "calculator", {"expression": "17*"})]),
        ProviderMessage("user", [ToolResultPart("c1", "Error: bad", is_error=True)]),
    ]
    client, bodies = scripted((200, completion(CALL_TEXT)))
    await complete_with(client, replace(calculator_request(output=ANSWER), messages=messages))
    assert "response_format" not in bodies[0] and "tools" in bodies[0]


async def test_tool_choice_none_lets_the_schema_apply() -> None:
    client, bodies = scripted((200, completion('{"answer": 1}')))
    await complete_with(client, calculator_request(output=ANSWER, tool_choice=ToolChoice.NONE))
    assert bodies[0]["response_format"] == RESPONSE_FORMAT and "tools" not in bodies[0]


async def test_a_forced_tool_choice_is_sent_as_the_openai_field() -> None:
    client, bodies = scripted((200, completion(CALL_TEXT)))
    await complete_with(client, calculator_request(tool_choice=ToolChoice.tool("calculator")))
    assert bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "calculator"}}
