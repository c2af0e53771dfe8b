"""Background mode on `openai-responses:`: polled, cancelled when given up on, streams resumed.

No test waits a real pause: the provider's `_sleep` is replaced by one that records the
pauses (and, where a test needs the call held, waits on an event nobody sets), its
`_clock` by one the pauses move on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from layer0 import TurnConfig, TurnInput
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_provider_openai.responses import BackgroundPolling
from neuron_turn import NeuronTurn
from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.provider import ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderOverloadedError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)
from tests.cassettes import CASSETTES, replay

from .._http_provider_support import Recorder, json_response, user
from ._responses_support import MODEL, message, response
from ._support import KEY, request

RESPONSE_ID = "resp_bg1"
HERE = CASSETTES / "openai_responses"


Answer = httpx.Response | Callable[[httpx.Request], httpx.Response]


def mocked(*answers: Answer, **options: Any) -> tuple[OpenAIResponsesProvider, Recorder]:
    """A provider whose injected client answers from `answers`, in turn (the last repeated)."""
    recorder = Recorder(*(answers or (json_response(background("completed")),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return OpenAIResponsesProvider(MODEL, api_key=KEY, client=client, **options), recorder


def background(status: str, *output: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A background response object at `status` (no output while it is being made)."""
    body = response(*output, status=status, id=RESPONSE_ID, background=True, store=True)
    if status in ("queued", "in_progress"):
        body.update(output=[], usage=None)
    body.update(fields)
    return body


class Pauses:
    """Stands in for `asyncio.sleep`: records each pause and moves a clock on by it.

    From pause number `hold_at` on, it waits on an event nobody sets (the call held, as a
    real pause would hold it, until it is cancelled); `held` is set when it does.
    """

    def __init__(self, hold_at: int | None = None) -> None:
        self.seen: list[float] = []
        self.now = 0.0
        self.hold_at = hold_at
        self.held = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.seen.append(seconds)
        self.now += seconds
        if self.hold_at is not None and len(self.seen) >= self.hold_at:
            self.held.set()
            await asyncio.Event().wait()

    def clock(self) -> float:
        return self.now


async def held(task: asyncio.Task[Any], pauses: Pauses) -> None:
    """Wait until the call pauses held, or ends (which fails the test)."""
    holding = asyncio.ensure_future(pauses.held.wait())
    await asyncio.wait({task, holding}, return_when=asyncio.FIRST_COMPLETED)
    holding.cancel()
    assert pauses.held.is_set(), f"the call ended without pausing: {task}"


def paused(provider: OpenAIResponsesProvider, pauses: Pauses) -> OpenAIResponsesProvider:
    provider._sleep = pauses
    provider._clock = pauses.clock
    return provider


def calls(recorder: Recorder) -> list[str]:
    """Each request as `METHOD path?query`."""
    return [
        f"{sent.method} {sent.url.path}" + (f"?{sent.url.query.decode()}" if sent.url.query else "")
        for sent in recorder.requests
    ]


CREATE = "POST /v1/responses"
POLL = f"GET /v1/responses/{RESPONSE_ID}"
CANCEL = f"POST /v1/responses/{RESPONSE_ID}/cancel"


# --- the option ----------------------------------------------------------------------


async def test_background_sends_background_and_store_true() -> None:
    provider, recorder = mocked(json_response(background("completed")), background=True)
    await provider.complete(request(model="o3-pro"))
    body = recorder.body
    assert (body["background"], body["store"]) == (True, True)
    # Stored: reasoning goes back by id, so its encrypted content is not asked for.
    assert "include" not in body


def test_store_false_in_body_defaults_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match=r"background=.*store: false"):
        OpenAIResponsesProvider(MODEL, background=True, body_defaults={"store": False})


async def test_store_false_in_extra_is_refused_before_anything_is_sent() -> None:
    provider, recorder = mocked(background=True)
    with pytest.raises(InvalidRequestError, match=r"background: true and store: false"):
        await provider.complete(request(extra={"store": False}))
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"first": 0}, "first"),
        ({"first": -1.0}, "first"),
        ({"first": float("nan")}, "first"),
        ({"first": True}, "first"),
        ({"most": 0.5}, "most"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"reconnects": -1}, "reconnects"),
        ({"reconnects": 1.5}, "reconnects"),
        ({"cancel_timeout": "5"}, "cancel_timeout"),
    ],
)
def test_a_bad_polling_value_is_refused_naming_itself(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=rf"BackgroundPolling\.{named} must"):
        BackgroundPolling(**fields)


def test_an_unknown_polling_field_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"unknown BackgroundPolling field\(s\) every"):
        OpenAIResponsesProvider(MODEL, background={"every": 3})


def test_from_plugins_takes_background_as_a_provider_option() -> None:
    turn = NeuronTurn.from_plugins(
        model="openai-responses:o3-pro",
        provider_options={"api_key": KEY, "background": {"first": 2, "most": 30}},
    )
    assert isinstance(turn.provider, OpenAIResponsesProvider)
    assert turn.provider.background == BackgroundPolling(first=2, most=30)
    assert KEY not in repr(turn.provider)
    plain = NeuronTurn.from_plugins(
        model="openai-responses:o3-pro", provider_options={"background": True}
    )
    assert isinstance(plain.provider, OpenAIResponsesProvider)
    assert plain.provider.background == BackgroundPolling()


# --- polled ----------------------------------------------------------------------------


async def test_a_queued_response_is_polled_with_growing_pauses_until_done() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        *(json_response(background("in_progress")) for _ in range(5)),
        json_response(background("completed", message("Deep answer."))),
        background=BackgroundPolling(first=1, most=10),
    )
    pauses = Pauses()
    answer = await paused(provider, pauses).complete(request(model="o3-pro"))
    assert answer.content == [TextPart("Deep answer.")]
    assert calls(recorder) == [CREATE, *[POLL] * 6]
    assert pauses.seen == [1, 2, 4, 8, 10, 10]
    assert all(sent.headers["authorization"] == f"Bearer {KEY}" for sent in recorder.requests)


async def test_only_a_response_the_api_runs_in_the_background_is_polled_unasked() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        json_response(background("completed", message("Done."))),
        body_defaults={"background": True, "store": True},
    )
    answer = await paused(provider, Pauses()).complete(request())
    assert answer.content == [TextPart("Done.")]
    assert calls(recorder) == [CREATE, POLL]
    # A foreground answer still being made is a server's mistake: refused, never polled.
    foreground, asked = mocked(json_response(background("in_progress", background=False)))
    with pytest.raises(ProviderResponseError, match="not finished"):
        await paused(foreground, Pauses()).complete(request())
    assert calls(asked) == [CREATE]


@pytest.mark.parametrize(
    ("code", "error"),
    [("rate_limit_exceeded", RateLimitError), ("server_error", ProviderServerError)],
)
async def test_a_failed_response_maps_by_its_code_and_is_not_cancelled(
    code: str, error: type[Exception]
) -> None:
    failed = background("failed", error={"code": code, "message": "It went wrong."})
    provider, recorder = mocked(
        json_response(background("queued")), json_response(failed), background=True
    )
    with pytest.raises(error, match="It went wrong"):
        await paused(provider, Pauses()).complete(request())
    assert calls(recorder) == [CREATE, POLL]


async def test_an_incomplete_response_is_the_truncated_answer() -> None:
    incomplete = background(
        "incomplete",
        message("Half an ans"),
        incomplete_details={"reason": "max_output_tokens"},
    )
    provider, _ = mocked(
        json_response(background("in_progress")), json_response(incomplete), background=True
    )
    answer = await paused(provider, Pauses()).complete(request())
    assert (answer.stop_reason, answer.truncated) == ("max_tokens", True)
    assert answer.content == [TextPart("Half an ans")]


async def test_a_response_cancelled_elsewhere_fails_the_call_for_good() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        json_response(background("cancelled")),
        background=True,
    )
    with pytest.raises(ProviderResponseError, match=f"{RESPONSE_ID} .*was cancelled") as caught:
        await paused(provider, Pauses()).complete(request())
    assert not caught.value.retryable
    assert calls(recorder) == [CREATE, POLL]


async def test_a_poll_refused_for_a_while_is_made_again() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        json_response({"error": {"message": "busy"}}, 503),
        json_response(background("completed", message("Got there."))),
        background=True,
    )
    answer = await paused(provider, Pauses()).complete(request())
    assert answer.content == [TextPart("Got there.")]
    assert calls(recorder) == [CREATE, POLL, POLL]


async def test_polls_failing_past_reconnects_fail_the_call_and_cancel_the_response() -> None:
    busy = json_response({"error": {"message": "busy"}}, 503)
    provider, recorder = mocked(
        json_response(background("queued")),
        busy,
        busy,
        json_response(background("cancelled")),
        background=BackgroundPolling(reconnects=1),
    )
    with pytest.raises(ProviderOverloadedError, match="busy"):
        await paused(provider, Pauses()).complete(request())
    assert calls(recorder) == [CREATE, POLL, POLL, CANCEL]


async def test_past_its_timeout_the_call_fails_and_the_response_is_cancelled() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        *(json_response(background("in_progress")) for _ in range(3)),
        json_response(background("cancelled")),
        background=BackgroundPolling(first=2, most=4, timeout=9),
    )
    pauses = Pauses()
    with pytest.raises(ProviderTimeoutError, match=r"not done after 9s"):
        await paused(provider, pauses).complete(request())
    # 2 + 4 + 3: the last pause is what was left of the 9 seconds.
    assert pauses.seen == [2, 4, 3]
    assert calls(recorder) == [CREATE, POLL, POLL, POLL, CANCEL]


async def test_a_poll_that_hangs_is_cut_at_the_timeout_and_the_response_cancelled() -> None:
    async def hang(_: httpx.Request) -> httpx.Response:
        await asyncio.Event().wait()  # a poll the server never answers
        raise AssertionError("unreachable")

    provider, recorder = mocked(
        json_response(background("queued")),
        hang,  # type: ignore[arg-type]  # MockTransport awaits an async handler's answer
        json_response(background("cancelled")),
        background=BackgroundPolling(first=0.01, most=0.01, timeout=0.02),
    )
    async with asyncio.timeout(5):  # a bound, should the poll never be cut
        with pytest.raises(ProviderTimeoutError, match=r"not done after 0.02s"):
            await paused(provider, Pauses()).complete(request())
    assert calls(recorder) == [CREATE, POLL, CANCEL]


async def test_cancelling_the_call_cancels_the_response_and_the_cancellation_goes_on() -> None:
    provider, recorder = mocked(
        json_response(background("queued")),
        json_response(background("in_progress")),
        json_response(background("cancelled")),
        background=True,
    )
    pauses = Pauses(hold_at=2)
    task = asyncio.create_task(paused(provider, pauses).complete(request()))
    await held(task, pauses)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls(recorder) == [CREATE, POLL, CANCEL]


async def test_a_failed_cancel_is_logged_without_the_key_and_hides_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    echo = json_response({"error": {"message": f"no such thing for {KEY}"}}, 500)
    provider, recorder = mocked(json_response(background("queued")), echo, background=True)
    pauses = Pauses(hold_at=1)
    task = asyncio.create_task(paused(provider, pauses).complete(request()))
    await held(task, pauses)
    task.cancel()
    with caplog.at_level(logging.WARNING, logger="neuron_provider_openai"):
        with pytest.raises(asyncio.CancelledError):
            await task
    assert calls(recorder) == [CREATE, CANCEL]
    assert f"could not cancel background response {RESPONSE_ID}" in caplog.text
    assert KEY not in caplog.text


async def test_the_turns_deadline_cancels_the_response() -> None:
    provider, recorder = mocked(
        json_response(background("queued")), json_response(background("cancelled")), background=True
    )
    turn = NeuronTurn(paused(provider, Pauses(hold_at=1)))
    output = await turn.execute(
        TurnInput(message="Research this.", trigger="user", config=TurnConfig(max_duration=20))
    )
    assert output.exit_reason == "timeout"
    assert calls(recorder) == [CREATE, CANCEL]


# --- streamed ------------------------------------------------------------------------


def events(*texts: str, done: bool = True) -> list[dict[str, Any]]:
    """A background stream's events, numbered from 0: opened, a delta per text, completed."""
    opened = background("queued")
    items: list[dict[str, Any]] = [
        {"type": "response.created", "response": opened},
        {"type": "response.queued", "response": opened},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message(""), "status": "in_progress", "content": []},
        },
    ]
    items += [
        {"type": "response.output_text.delta", "output_index": 0, "delta": text} for text in texts
    ]
    if done:
        final = background("completed", message("".join(texts)))
        items.append({"type": "response.completed", "response": final})
    return [{**event, "sequence_number": number} for number, event in enumerate(items)]


def sse_bytes(items: list[dict[str, Any]]) -> bytes:
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in items
    ).encode()


def dropped(items: list[dict[str, Any]]) -> Callable[[httpx.Request], httpx.Response]:
    """A stream that sends `items`, then loses its connection."""

    async def body() -> AsyncIterator[bytes]:
        yield sse_bytes(items)
        raise httpx.ReadError("connection reset by peer")

    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    return answer


def streamed(items: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=sse_bytes(items)
    )


async def test_a_dropped_stream_is_resumed_after_the_last_event_never_repeating_one() -> None:
    whole = events("Once", " upon", " a time.")
    provider, recorder = mocked(
        dropped(whole[:5]),
        # The server repeats event 4 on resume: it was handed on already.
        streamed(whole[4:]),
        background=True,
    )
    got = [event async for event in paused(provider, Pauses()).stream(request(model="o3-pro"))]
    *deltas, answer = got
    assert deltas == [TextDelta("Once"), TextDelta(" upon"), TextDelta(" a time.")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [TextPart("Once upon a time.")]
    assert calls(recorder) == [CREATE, f"{POLL}?stream=true&starting_after=4"]
    assert recorder.requests[1].headers["authorization"] == f"Bearer {KEY}"


async def test_a_stream_dropped_again_and_again_is_resumed_each_time_it_moved_on() -> None:
    whole = events("a", "b", "c", "d")
    provider, recorder = mocked(
        dropped(whole[:4]),
        dropped(whole[4:5]),
        dropped(whole[5:6]),
        streamed(whole[6:]),
        background=BackgroundPolling(reconnects=1),
        stream=True,
    )
    answer = await paused(provider, Pauses()).complete(request())
    assert answer.content == [TextPart("abcd")]
    assert calls(recorder)[1:] == [
        f"{POLL}?stream=true&starting_after=3",
        f"{POLL}?stream=true&starting_after=4",
        f"{POLL}?stream=true&starting_after=5",
    ]


async def test_a_stream_that_cannot_be_resumed_fails_and_cancels_the_response() -> None:
    whole = events("a", "b")

    def unreachable(_: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route to host")

    provider, recorder = mocked(
        dropped(whole[:4]),
        unreachable,
        unreachable,
        json_response(background("cancelled")),
        background=BackgroundPolling(reconnects=2),
    )
    pauses = Pauses()
    with pytest.raises(ProviderConnectionError, match=rf"{RESPONSE_ID} .*could not be resumed"):
        _ = [event async for event in paused(provider, pauses).stream(request())]
    resume = f"{POLL}?stream=true&starting_after=3"
    assert calls(recorder) == [CREATE, resume, resume, CANCEL]
    assert pauses.seen == [1, 2]


async def test_closing_a_background_stream_early_cancels_the_response() -> None:
    cancelled = asyncio.Event()

    def cancel(_: httpx.Request) -> httpx.Response:
        cancelled.set()
        return json_response(background("cancelled"))

    provider, recorder = mocked(
        streamed(events("a", "b", done=False)), cancel, cancel, background=True
    )
    stream = paused(provider, Pauses()).stream(request())
    assert await anext(stream) == TextDelta("a")
    await stream.aclose()  # type: ignore[attr-defined]

    # Closed through the provider's stream, its event reader: cancelled before aclose returns.
    assert cancelled.is_set()
    assert calls(recorder) == [CREATE, CANCEL]


def refused(status: int, text: str = "stream not available") -> httpx.Response:
    return json_response({"error": {"message": text}}, status)


@pytest.mark.parametrize("status", [400, 404, 410])
async def test_a_refused_resume_falls_back_to_polling_handing_on_no_event_twice(
    status: int,
) -> None:
    whole = events("Once", " upon", " a time.")
    provider, recorder = mocked(
        dropped(whole[:5]),
        refused(status),
        json_response(background("in_progress")),
        json_response(background("completed", message("Once upon a time."))),
        background=True,
    )
    pauses = Pauses()
    got = [event async for event in paused(provider, pauses).stream(request(model="o3-pro"))]
    *deltas, answer = got
    # Only what the stream brought before it dropped; the answer after is the polled one, whole.
    assert deltas == [TextDelta("Once"), TextDelta(" upon")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [TextPart("Once upon a time.")]
    assert calls(recorder) == [CREATE, f"{POLL}?stream=true&starting_after=4", POLL, POLL]
    # The pause before the resume, then the polls' own doubling pauses from `first`.
    assert pauses.seen == [1, 1, 2]


async def test_a_refused_resume_of_a_streamed_complete_is_polled_to_its_answer() -> None:
    whole = events("a", "b")
    provider, recorder = mocked(
        dropped(whole[:4]),
        refused(400),
        json_response(background("completed", message("ab"))),
        background=True,
        stream=True,
    )
    answer = await paused(provider, Pauses()).complete(request())
    assert answer.content == [TextPart("ab")]
    assert calls(recorder)[2:] == [POLL]


async def test_a_refused_resume_then_a_failed_response_maps_by_its_code_uncancelled() -> None:
    failed = background("failed", error={"code": "server_error", "message": "model crashed"})
    provider, recorder = mocked(
        dropped(events("a", "b")[:4]), refused(404), json_response(failed), background=True
    )
    with pytest.raises(ProviderServerError, match="model crashed"):
        _ = [event async for event in paused(provider, Pauses()).stream(request())]
    assert calls(recorder)[2:] == [POLL]


async def test_a_resume_refused_as_unauthorized_fails_at_once_without_polling() -> None:
    provider, recorder = mocked(
        dropped(events("a", "b")[:4]), refused(401, "bad key"), background=True
    )
    with pytest.raises(ProviderAuthenticationError, match="bad key") as caught:
        _ = [event async for event in paused(provider, Pauses()).stream(request())]
    assert not caught.value.retryable
    # Not allowed to see the response: neither polled nor cancelled (that would be refused too).
    assert calls(recorder) == [CREATE, f"{POLL}?stream=true&starting_after=3"]


async def test_a_refused_resume_whose_poll_finds_the_response_gone_fails_for_good() -> None:
    provider, recorder = mocked(
        dropped(events("a", "b")[:4]),
        refused(400),
        refused(404, f"Response with id '{RESPONSE_ID}' not found."),
        background=True,
    )
    with pytest.raises(ModelNotFoundError, match="not found") as caught:
        _ = [event async for event in paused(provider, Pauses()).stream(request())]
    assert not caught.value.retryable
    assert calls(recorder)[2:] == [POLL]


async def test_a_refused_resume_is_polled_within_the_polling_timeout_then_cancelled() -> None:
    provider, recorder = mocked(
        dropped(events("a", "b")[:4]),
        refused(404),
        *(json_response(background("in_progress")) for _ in range(3)),
        json_response(background("cancelled")),
        background=BackgroundPolling(first=2, most=4, timeout=9),
    )
    pauses = Pauses()
    with pytest.raises(ProviderTimeoutError, match=r"not done after 9s"):
        _ = [event async for event in paused(provider, pauses).stream(request())]
    # The pause before the resume, then 2 + 4 + 3 of polling: the timeout counts from there.
    assert pauses.seen == [2, 2, 4, 3]
    assert calls(recorder)[2:] == [POLL, POLL, POLL, CANCEL]


async def test_a_resume_answered_busy_is_tried_again_as_a_dropped_one_is() -> None:
    whole = events("a", "b")
    provider, recorder = mocked(
        dropped(whole[:4]),
        refused(503, "busy"),
        streamed(whole[3:]),
        background=True,
    )
    got = [event async for event in paused(provider, Pauses()).stream(request())]
    assert got[:-1] == [TextDelta("a"), TextDelta("b")]
    resume = f"{POLL}?stream=true&starting_after=3"
    assert calls(recorder) == [CREATE, resume, resume]


async def test_leaving_while_a_refused_resume_is_polled_cancels_the_response_once() -> None:
    cancels: list[httpx.Request] = []

    def cancel(sent: httpx.Request) -> httpx.Response:
        cancels.append(sent)
        return json_response(background("cancelled"))

    provider, recorder = mocked(
        dropped(events("a", "b")[:4]), refused(404), cancel, background=True
    )
    pauses = Pauses(hold_at=2)  # the resume's pause passes, the first poll's is held
    task = asyncio.ensure_future(consume(paused(provider, pauses).stream(request())))
    await held(task, pauses)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls(recorder) == [CREATE, f"{POLL}?stream=true&starting_after=3", CANCEL]
    assert len(cancels) == 1


async def consume(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


# --- cassettes (the API's own format, written by hand) ----------------------------------

QUESTION = request(user("What is the capital of France?"), model="o3-pro", max_tokens=2048)


def replayed(provider: OpenAIResponsesProvider) -> OpenAIResponsesProvider:
    """The provider, its pauses skipped on replay (re-recording waits for real)."""
    return provider if os.environ.get("NEURON_RECORD") == "1" else paused(provider, Pauses())


async def test_polled_cassette(api_key: str) -> None:
    with replay(HERE / "background_polled.yaml"):
        async with OpenAIResponsesProvider("o3-pro", background=True) as provider:
            answer = await replayed(provider).complete(QUESTION)
    assert answer.content[-1] == TextPart("Paris is the capital of France.")
    assert (answer.stop_reason, answer.model) == ("end_turn", "o3-pro-2025-06-10")
    assert answer.usage.output_tokens == 342


async def test_resumed_stream_cassette(api_key: str) -> None:
    with replay(HERE / "background_stream_resumed.yaml"):
        async with OpenAIResponsesProvider("o3-pro", background=True) as provider:
            got = [event async for event in replayed(provider).stream(QUESTION)]
    *deltas, answer = got
    assert deltas == [TextDelta("Paris is"), TextDelta(" the capital"), TextDelta(" of France.")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content[-1] == TextPart("Paris is the capital of France.")


async def test_refused_resume_polled_cassette(api_key: str) -> None:
    with replay(HERE / "background_stream_resume_refused.yaml"):
        async with OpenAIResponsesProvider("o3-pro", background=True) as provider:
            got = [event async for event in replayed(provider).stream(QUESTION)]
    *deltas, answer = got
    assert deltas == [TextDelta("Paris is")]
    assert isinstance(answer, ProviderResponse)
    assert answer.content[-1] == TextPart("Paris is the capital of France.")
    assert answer.usage.output_tokens == 342


class Creation:
    """A transport whose `POST /responses` answers only once `release` is set."""

    def __init__(self, answer: httpx.Response | None) -> None:
        self.answer = answer
        self.started, self.release = asyncio.Event(), asyncio.Event()
        self.seen: list[str] = []

    async def __call__(self, sent: httpx.Request) -> httpx.Response:
        self.seen.append(f"{sent.method} {sent.url.path}")
        if sent.url.path.endswith("/cancel"):
            return json_response(background("cancelled"))
        self.started.set()
        await self.release.wait()
        assert self.answer is not None
        return self.answer


def created_by(creation: Creation, **polling: Any) -> OpenAIResponsesProvider:
    client = httpx.AsyncClient(transport=httpx.MockTransport(creation))
    settings = BackgroundPolling(**polling)
    return OpenAIResponsesProvider(MODEL, api_key=KEY, client=client, background=settings)


async def test_a_call_cancelled_while_its_response_is_created_cancels_that_response() -> None:
    creation = Creation(json_response(background("queued")))
    task = asyncio.create_task(created_by(creation).complete(request()))
    await creation.started.wait()

    task.cancel()
    creation.release.set()  # the API names the response it made after all

    with pytest.raises(asyncio.CancelledError):
        await task
    assert creation.seen == [CREATE, CANCEL]


async def test_a_creation_never_answered_is_given_up_after_cancel_timeout_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    creation = Creation(None)
    task = asyncio.create_task(created_by(creation, cancel_timeout=0.05).complete(request()))
    await creation.started.wait()

    task.cancel()
    with caplog.at_level(logging.WARNING), pytest.raises(asyncio.CancelledError):
        await task

    assert creation.seen == [CREATE]
    assert any("may run on" in record.getMessage() for record in caplog.records)
