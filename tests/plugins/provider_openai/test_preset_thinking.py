"""The unified thinking setting on the vendor presets: each vendor's own fields."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from neuron_provider_openai import PresetProvider
from neuron_provider_openai.preset_providers import preset_provider_class
from neuron_provider_openai.presets import PRESETS, Preset
from neuron_turn import NeuronTurn, NeuronTurnConfig, UnsupportedThinkingError
from neuron_turn.loop.provider import TextPart, ThinkingPart
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._support import KEY, Recorder, completion, json_response, request

LEVELS: tuple[Any, ...] = (True, False, "minimal", "low", "medium", "high", "xhigh")
REFUSED = "refused"


def effort(value: str) -> dict[str, Any]:
    return {"reasoning_effort": value}


OPENAI_STYLE = [effort(value) for value in ["low", "low", "medium", "high", "high"]]
GPT_OSS = [effort("medium"), REFUSED, *OPENAI_STYLE]

# (preset, model) -> the thinking fields of the body for each of LEVELS, from each
# vendor's documentation (cited in presets.py).
EXPECTED: dict[tuple[str, str], list[Any]] = {
    ("groq", "openai/gpt-oss-120b"): GPT_OSS,
    ("groq", "qwen/qwen3-32b"): [effort("default"), effort("none"), *[effort("default")] * 5],
    ("groq", "llama-3.3-70b-versatile"): [REFUSED] * 7,
    ("deepseek", "deepseek-chat"): [
        {"thinking": {"type": "enabled"}},
        {"thinking": {"type": "disabled"}},
        *(
            {"thinking": {"type": "enabled"}, "reasoning_effort": value}
            for value in ["low", "low", "high", "high", "max"]
        ),
    ],
    ("openrouter", "deepseek/deepseek-r1"): [
        {"reasoning": {"enabled": True}},
        {"reasoning": {"effort": "none"}},
        *({"reasoning": {"effort": value}} for value in ["minimal", "low", "medium", "high"]),
        {"reasoning": {"effort": "xhigh"}},
    ],
    ("mistral", "mistral-small-latest"): [effort("high"), effort("none"), *[effort("high")] * 5],
    ("xai", "grok-4.3"): [{}, effort("none"), *OPENAI_STYLE],
    ("xai", "grok-3-mini"): [{}, REFUSED, *map(effort, ["low", "low", "high", "high", "high"])],
    ("xai", "grok-4-0709"): [REFUSED] * 7,
    ("xai", "grok-4-1-fast-reasoning"): [REFUSED] * 7,
    ("xai", "grok-code-fast-1"): [REFUSED] * 7,
    ("together", "openai/gpt-oss-120b"): GPT_OSS,
    ("together", "moonshotai/Kimi-K2.5"): [
        {"reasoning": {"enabled": True}},
        {"reasoning": {"enabled": False}},
        *[{"reasoning": {"enabled": True}}] * 5,
    ],
    ("fireworks", "accounts/fireworks/models/deepseek-v3p1"): GPT_OSS,
    ("cerebras", "gpt-oss-120b"): GPT_OSS,
    ("cerebras", "zai-glm-4.7"): [
        {"disable_reasoning": False},
        {"disable_reasoning": True},
        *[{"disable_reasoning": False}] * 5,
    ],
}

CASES = [
    (name, model, level, fields)
    for (name, model), row in EXPECTED.items()
    for level, fields in zip(LEVELS, row, strict=True)
]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for preset in PRESETS:
        monkeypatch.delenv(preset.api_key_env, raising=False)


def provider(name: str, *responses: httpx.Response, **options: Any) -> tuple[Any, Recorder]:
    recorder = Recorder(*(responses or (json_response(completion()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return preset_provider_class(name)("m", api_key=KEY, client=client, **options), recorder


THINKING_KEYS = {"reasoning_effort", "reasoning", "thinking", "disable_reasoning"}


def test_every_preset_says_how_it_takes_thinking_and_cites_its_source() -> None:
    assert {name for name, _ in EXPECTED} == {preset.name for preset in PRESETS}
    for preset in PRESETS:
        assert preset.thinking is not None
        assert preset.thinking.source.startswith("https://")
        assert preset_provider_class(preset.name).takes_thinking is True


@pytest.mark.parametrize(("name", "model", "level", "fields"), CASES)
def test_each_level_becomes_the_vendors_own_fields(
    name: str, model: str, level: Any, fields: Any
) -> None:
    built, _ = provider(name)
    req = request(model=model, thinking=level)
    if fields == REFUSED:
        with pytest.raises(InvalidRequestError, match=rf"^{name}: {model} (takes no|cannot stop)"):
            built.request_body(req)
        return
    body = built.request_body(req)
    assert {key: body[key] for key in THINKING_KEYS & body.keys()} == fields


@pytest.mark.parametrize("name", [preset.name for preset in PRESETS])
def test_no_setting_sends_no_thinking_field(name: str) -> None:
    built, _ = provider(name)
    assert not THINKING_KEYS & built.request_body(request(model="gpt-oss-120b")).keys()


@pytest.mark.parametrize(
    ("name", "own"),
    [
        ("groq", {"reasoning_effort": "low"}),
        ("deepseek", {"reasoning_effort": "low"}),
        ("deepseek", {"thinking": {"type": "disabled"}}),
        ("openrouter", {"reasoning": {"max_tokens": 2000}}),
        ("openrouter", {"reasoning_effort": "low"}),
        ("together", {"reasoning": {"enabled": False}}),
        ("cerebras", {"disable_reasoning": True}),
    ],
)
@pytest.mark.parametrize("where", ["extra", "body_defaults"])
def test_the_apis_own_field_wins_and_the_setting_adds_nothing(
    name: str, own: dict[str, Any], where: str
) -> None:
    options = {"body_defaults": own} if where == "body_defaults" else {}
    extra = own if where == "extra" else {}
    built, _ = provider(name, **options)
    body = built.request_body(request(model="zai-glm-4.7", thinking="high", extra=extra))
    assert {key: body[key] for key in THINKING_KEYS & body.keys()} == own


async def test_a_refused_model_is_refused_before_any_call() -> None:
    built, recorder = provider("xai")
    with pytest.raises(InvalidRequestError, match="set the API's own field in extra") as info:
        await built.complete(request(model="grok-4", thinking="high"))
    assert "docs.x.ai" in str(info.value)
    assert recorder.requests == []


ACME = Preset(
    name="acme-nothink",
    base_url="https://api.acme.example/v1",
    api_key_env="ACME_API_KEY",
    price_provider_id="acme",
)


def test_a_preset_with_no_documented_field_still_refuses_the_turn() -> None:
    class AcmeProvider(PresetProvider, preset=ACME):
        """A vendor with no documented thinking field."""

    assert AcmeProvider.takes_thinking is False
    with pytest.raises(UnsupportedThinkingError, match="set the API's own field in extra"):
        NeuronTurn(AcmeProvider("a-1", api_key=KEY), config=NeuronTurnConfig(thinking="high"))


async def test_a_groq_turn_with_thinking_is_made_and_sends_reasoning_effort() -> None:
    reply = completion("Yes.", model="openai/gpt-oss-120b", reasoning="2^61 - 1 is a Mersenne.")
    recorder = Recorder(json_response(reply))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    turn = NeuronTurn.from_plugins(
        model="groq:openai/gpt-oss-120b",
        config=NeuronTurnConfig(thinking="high"),
        provider_options={"api_key": KEY, "client": client},
    )
    await turn.execute(TurnInput(message="Is 2^61 - 1 prime?", trigger="user"))
    sent = json.loads(recorder.requests[0].content)
    assert str(recorder.requests[0].url) == "https://api.groq.com/openai/v1/chat/completions"
    assert sent["reasoning_effort"] == "high"
    assert sent["model"] == "openai/gpt-oss-120b"
    await client.aclose()


@pytest.mark.parametrize(
    ("name", "model", "field"),
    [
        ("groq", "qwen/qwen3-32b", "reasoning"),
        ("openrouter", "m", "reasoning"),
        ("deepseek", "m", "reasoning_content"),
    ],
)
async def test_the_vendors_reasoning_text_comes_back_as_thinking(
    name: str, model: str, field: str
) -> None:
    built, _ = provider(name, json_response(completion("Yes.", **{field: "Think."})))
    response = await built.complete(request(model=model, thinking=True))
    assert response.content == [ThinkingPart("Think."), TextPart("Yes.")]


async def test_mistral_streams_its_thinking_chunks_as_thinking() -> None:
    def chunk(content: Any, finish: str | None = None) -> str:
        delta = {"role": "assistant", "content": content}
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({'model': 'm', 'choices': [choice]})}\n\n"

    thought = [{"type": "thinking", "thinking": [{"type": "text", "text": "Four children."}]}]
    text = [{"type": "text", "text": "John is 20."}]
    answer = httpx.Response(200, text=chunk(thought) + chunk(text, "stop") + "data: [DONE]\n\n")
    built, recorder = provider("mistral", answer, stream=True)
    response = await built.complete(request(model="mistral-small-latest", thinking="high"))
    assert recorder.body["reasoning_effort"] == "high"
    assert response.content == [ThinkingPart("Four children."), TextPart("John is 20.")]
