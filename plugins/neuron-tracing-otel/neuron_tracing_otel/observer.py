"""`TracingObserver`: each turn as OpenTelemetry spans, following the GenAI conventions.

One turn gives one `invoke_agent {agent}` span (kind INTERNAL), and under it
one `chat {model}` span (kind CLIENT) per model call and one `execute_tool
{tool}` span (kind INTERNAL) per tool call, siblings in the order they
happened (parallel tool calls overlap). A span is current while its work
runs, so spans other instrumentations make inside it (an HTTP client, a
database) nest under it.

Attributes are the conventions' `gen_ai.*` names: operation, provider (as
`gen_ai.provider.name` and, for older backends, `gen_ai.system`), agent name,
conversation id (the session), requested and answering model, token usage
(cache reads and writes too), finish reasons, tool name, description, call id
and type. A provider that calls a URL (a `base_url` attribute, as the
Anthropic, OpenAI and Ollama plugins have) gives its host and port as
`server.address` and `server.port` on the chat spans and the metrics: what
tells one OpenAI-compatible server from another.
Cost, which the conventions do not name, is `neuron.cost.usd` (a double, on
the chat spans and the turn's total on the agent span), with the exit reason
(`neuron.turn.exit_reason`) and the number of model calls
(`neuron.turn.model_calls`). Messages, system instructions, tool definitions,
tool arguments and results are recorded only with `capture_content`, each
text cut at `MAX_CONTENT_CHARS` with a note giving its length; the
images and documents a tool returned with its result are then named on its
span (`neuron.tool.call.result.files`: media type, a document's name) and in
the messages, never copied.

Errors set the span's status to ERROR with `error.type`: the exception's
class name for a turn or model call that raised (`ModelError`,
`RateLimitError`, ...), `tool_error` for a tool call that failed, `cancelled`
for work the turn's end cut short.

Each model call also records the GenAI client metrics from the same events
(`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`; see
`neuron_tracing_otel._metrics`), with the chat span's operation, provider,
models, server and `error.type`.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import Mapping
from contextvars import Token
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.util.types import AttributeValue

from layer0 import CustomExit, ExitReason, ObserverHalt, TurnOutput
from neuron_turn import (
    EffectDeclared,
    HookHalted,
    Lifecycle,
    LimitReached,
    ModelCallDone,
    ModelCallStart,
    ProviderMessage,
    ProviderRequest,
    TextPart,
    ToolResult,
    ToolStart,
    TurnEvent,
    TurnStart,
)

from . import _messages as messages
from . import _semconv as sc
from ._bounded import bounded
from ._metrics import ClientMetrics

__all__ = ["TracingObserver", "provider_name", "server_attributes"]

_SCOPE: Final = "neuron_tracing_otel"
_CANCELLED: Final = "cancelled"


class TracingObserver:
    """A `neuron_turn.TurnObserver` that records every turn as GenAI spans.

    Why an observer and not a hook: spans need the turn's start and end, each
    call's own usage and timing, and the tool call ids, which hook contexts do
    not carry. It records the model calls' metrics too, from the same events.
    `neuron_tracing_otel.instrument()` registers one.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        meter_provider: MeterProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        """Make spans with `tracer_provider`, metrics with `meter_provider` (default: global).

        `capture_content` records messages, system instructions, tool
        definitions, arguments and results on the spans (never on metrics);
        they may hold personal data, so it is off unless asked for.
        """
        self.tracer_provider = tracer_provider
        """The provider given (None: the global one): where readers of the spans, as
        neuron-evals, add a span processor."""
        self.tracer: Tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)
        self.metrics = ClientMetrics(meter_provider)
        self.capture_content = capture_content

    def __repr__(self) -> str:
        return f"TracingObserver(capture_content={self.capture_content})"

    def watch(self, turn: TurnStart) -> _TurnSpans:
        """Open the turn's `invoke_agent` span; the returned watch records the rest."""
        return _TurnSpans(self.tracer, self.metrics, turn, capture=self.capture_content)


def provider_name(provider: object) -> str:
    """The `gen_ai.provider.name` of `provider`: its plugin's name, else its class's.

    `neuron_provider_anthropic.AnthropicProvider` gives `anthropic`, the
    OpenAI plugin `openai` (also for compatible servers, as the conventions
    ask), `neuron_turn.testing.ScriptedProvider` gives `scripted`.
    """
    cls = type(provider)
    package = cls.__module__.partition(".")[0]
    if package.startswith("neuron_provider_"):
        return package.removeprefix("neuron_provider_")
    name = cls.__name__.removeprefix("_")
    return (name.removesuffix("Provider") or name).lower()


_DEFAULT_PORTS: Final = {"https": 443, "http": 80}


def server_attributes(provider: object) -> dict[str, AttributeValue]:
    """`server.address` and `server.port` of the server `provider` calls, from its `base_url`.

    Empty for a provider without a `base_url` string or with one that names no
    host. Only the host and port are taken: credentials a URL may carry
    (`https://user:key@host`) never reach a span.
    """
    url = getattr(provider, "base_url", None)
    if not isinstance(url, str):
        return {}
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return {}
    host = parts.hostname
    if not host:
        return {}
    port = _DEFAULT_PORTS.get(parts.scheme) if port is None else port
    return (
        {sc.SERVER_ADDRESS: host}
        if port is None
        else {sc.SERVER_ADDRESS: host, sc.SERVER_PORT: port}
    )


@dataclass(slots=True)
class _Chat:
    """The model call under way: its span, and what its metrics need when it ends."""

    span: Span
    token: Token[Context]
    started: float
    """`time.perf_counter()` when the call started."""
    attributes: dict[str, AttributeValue]
    """The metrics' attributes: operation, provider, requested model."""


class _TurnSpans:
    """The spans of one turn (a `neuron_turn.TurnWatch`), and its model calls' metrics."""

    def __init__(
        self, tracer: Tracer, metrics: ClientMetrics, turn: TurnStart, *, capture: bool
    ) -> None:
        self._tracer = tracer
        self._metrics = metrics
        self._capture = capture
        provider = provider_name(turn.provider)
        common: dict[str, AttributeValue] = {sc.PROVIDER: provider, sc.SYSTEM: provider}
        if turn.input.session is not None:
            common[sc.CONVERSATION] = turn.input.session
        self._common = common
        self._server = server_attributes(turn.provider)
        self._agent = tracer.start_span(
            f"{sc.INVOKE_AGENT} {turn.agent}",
            kind=SpanKind.INTERNAL,
            attributes={
                sc.OPERATION: sc.INVOKE_AGENT,
                sc.AGENT_NAME: turn.agent,
                **({sc.REQUEST_MODEL: turn.model} if turn.model else {}),
                **common,
            },
        )
        if capture:
            text = turn.input.message.as_text() or ""
            user = messages.input_messages([ProviderMessage("user", [TextPart(text)])])
            self._agent.set_attribute(sc.INPUT_MESSAGES, messages.dumps(user))
        self._context = trace.set_span_in_context(self._agent)
        self._task = asyncio.current_task()
        self._agent_token = context.attach(self._context)
        self._chat: _Chat | None = None
        self._tools: dict[str, tuple[Span, Token[Context], asyncio.Task[object] | None]] = {}
        # Tool events carry no description; the last request offered each tool with one.
        self._descriptions: dict[str, str] = {}

    def on_event(self, event: TurnEvent) -> None:
        """Open or close the span `event` starts or ends; note halts, limits and effects."""
        if isinstance(event, ModelCallStart):
            self._chat_started(event)
        elif isinstance(event, ModelCallDone):
            self._chat_done(event)
        elif isinstance(event, ToolStart):
            self._tool_started(event)
        elif isinstance(event, ToolResult):
            self._tool_done(event)
        elif isinstance(event, HookHalted):
            self._agent.add_event("neuron.hook_halted", {"neuron.reason": event.reason})
        elif isinstance(event, LimitReached):
            self._agent.add_event("neuron.limit_reached", {"neuron.reason": _exit(event.reason)})
        elif isinstance(event, Lifecycle):
            happened = event.event
            details = {
                "neuron.lifecycle.type": happened.type,
                # Each string cut inside the JSON, so what the span holds still parses.
                "neuron.lifecycle.data": messages.dumps(happened.model_dump(mode="json")),
            }
            self._agent.add_event("neuron.lifecycle", details)
        elif isinstance(event, EffectDeclared):
            self._agent.add_event(
                "neuron.effect_declared", {"neuron.effect.type": event.effect.type}
            )

    def on_end(self, output: TurnOutput | None, error: BaseException | None) -> None:
        """Close whatever is still open, then the agent span, with the turn's totals or error."""
        for tool_call_id in list(self._tools):
            span, token, task = self._tools.pop(tool_call_id)
            _fail(span, error, fallback=_CANCELLED)
            span.end()
            self._detach(token, task)
        if self._chat is not None:
            chat = self._chat
            self._chat = None
            cause = None if error is None else (error.__cause__ or error)
            _fail(chat.span, cause, fallback=_CANCELLED)
            chat.span.end()
            seconds = time.perf_counter() - chat.started
            self._metrics.call_failed(chat.attributes, seconds, _error_type(cause))
            self._detach(chat.token, self._task)
        if output is not None:
            self._agent.set_attributes(self._totals(output))
        _fail(self._agent, error, fallback=None)
        self._agent.end()
        self._detach(self._agent_token, self._task)

    def _chat_started(self, event: ModelCallStart) -> None:
        request = event.request
        attributes: dict[str, AttributeValue] = {
            sc.OPERATION: sc.CHAT,
            **self._common,
            **self._server,
        }
        measured: dict[str, AttributeValue] = {
            sc.OPERATION: sc.CHAT,
            sc.PROVIDER: self._common[sc.PROVIDER],
            **self._server,
        }
        model = ""
        if request is not None:
            self._descriptions = {tool.name: tool.description for tool in request.tools}
            model = request.model
            if model:
                attributes[sc.REQUEST_MODEL] = model
                measured[sc.REQUEST_MODEL] = model
            attributes[sc.OUTPUT_TYPE] = "text" if request.output is None else "json"
            if request.max_tokens is not None:
                attributes[sc.REQUEST_MAX_TOKENS] = request.max_tokens
            if request.temperature is not None:
                attributes[sc.REQUEST_TEMPERATURE] = request.temperature
            if self._capture:
                attributes.update(_request_content(request))
        span = self._tracer.start_span(
            f"{sc.CHAT} {model}".rstrip(),
            context=self._context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        token = context.attach(trace.set_span_in_context(span, self._context))
        self._chat = _Chat(span, token, time.perf_counter(), measured)

    def _chat_done(self, event: ModelCallDone) -> None:
        if self._chat is None:
            return
        chat = self._chat
        self._chat = None
        seconds = time.perf_counter() - chat.started
        span = chat.span
        usage = event.usage
        attributes: dict[str, AttributeValue] = {
            sc.RESPONSE_MODEL: event.model,
            sc.FINISH_REASONS: [sc.FINISH_REASON.get(event.stop_reason, event.stop_reason)],
            sc.INPUT_TOKENS: usage.input_tokens,
            sc.OUTPUT_TOKENS: usage.output_tokens,
        }
        if usage.cache_read_tokens is not None:
            attributes[sc.CACHE_READ_TOKENS] = usage.cache_read_tokens
        if usage.cache_creation_tokens is not None:
            attributes[sc.CACHE_CREATION_TOKENS] = usage.cache_creation_tokens
        if event.cost is not None:
            attributes[sc.COST_USD] = _usd(event.cost.amount)
        if self._capture and event.response is not None:
            output = messages.output_messages(event.response.content, event.stop_reason)
            attributes[sc.OUTPUT_MESSAGES] = messages.dumps(output)
        span.set_attributes(attributes)
        for call in event.hosted_calls:
            # The provider ran it inside this call: an event of the call's span, not a span.
            details: dict[str, AttributeValue] = {sc.TOOL_NAME: call.name}
            if self._capture:
                details[sc.TOOL_ARGUMENTS] = messages.dumps(call.input)
            span.add_event(sc.HOSTED_TOOL_CALL, details)
        span.end()
        measured = chat.attributes
        if event.model:
            measured = {**measured, sc.RESPONSE_MODEL: event.model}
        self._metrics.call_done(measured, seconds, usage)
        self._detach(chat.token, self._task)

    def _tool_started(self, event: ToolStart) -> None:
        attributes: dict[str, AttributeValue] = {
            sc.OPERATION: sc.EXECUTE_TOOL,
            # The provider's words, bounded as content is: one huge id would
            # make an OTLP receiver refuse the whole batch.
            sc.TOOL_NAME: bounded(event.name),
            sc.TOOL_CALL_ID: bounded(event.id),
            sc.TOOL_TYPE: "function",
            **self._common,
        }
        description = self._descriptions.get(event.name)
        if description:
            attributes[sc.TOOL_DESCRIPTION] = description
        if self._capture:
            attributes[sc.TOOL_ARGUMENTS] = messages.dumps(event.input)
        span = self._tracer.start_span(
            f"{sc.EXECUTE_TOOL} {event.name}",
            context=self._context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        # Parallel calls run in tasks of their own: each one's span is current in its task.
        token = context.attach(trace.set_span_in_context(span, self._context))
        self._tools[event.id] = (span, token, asyncio.current_task())

    def _tool_done(self, event: ToolResult) -> None:
        entry = self._tools.pop(event.id, None)
        if entry is None:
            return
        span, token, task = entry
        if self._capture:
            span.set_attribute(sc.TOOL_RESULT, bounded(event.content))
            if event.files:
                span.set_attribute(sc.TOOL_RESULT_FILES, list(event.files))
        if event.is_error:
            # The text the model reads may quote the input: it is content, kept out by default.
            description = bounded(event.content) if self._capture else "the tool call failed"
            span.set_status(Status(StatusCode.ERROR, description))
            span.set_attribute(sc.ERROR_TYPE, "tool_error")
        span.end()
        self._detach(token, task)

    def _totals(self, output: TurnOutput) -> Mapping[str, AttributeValue]:
        metadata = output.metadata
        totals: dict[str, AttributeValue] = {
            sc.INPUT_TOKENS: metadata.tokens_in,
            sc.OUTPUT_TOKENS: metadata.tokens_out,
            sc.COST_USD: _usd(metadata.cost.amount),
            sc.EXIT_REASON: _exit(output.exit_reason),
            sc.TURNS_USED: metadata.turns_used,
        }
        if self._capture:
            text = output.message.as_text() or ""
            answer = messages.output_messages([TextPart(text)], "end_turn")
            totals[sc.OUTPUT_MESSAGES] = messages.dumps(answer)
        return totals

    @staticmethod
    def _detach(token: Token[Context], task: asyncio.Task[object] | None) -> None:
        # A token belongs to the task that attached it; a cancelled parallel call's
        # task is gone with its context, so there is nothing to restore there.
        if asyncio.current_task() is task:
            context.detach(token)


def _fail(span: Span, error: BaseException | None, *, fallback: str | None) -> None:
    """Mark `span` failed by `error`, or (no error) by `fallback` if given."""
    if error is None:
        if fallback is not None:
            span.set_status(Status(StatusCode.ERROR, "the turn ended before this finished"))
            span.set_attribute(sc.ERROR_TYPE, fallback)
        return
    if isinstance(error, asyncio.CancelledError):
        span.set_status(Status(StatusCode.ERROR, "cancelled"))
        span.set_attribute(sc.ERROR_TYPE, _CANCELLED)
        return
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, bounded(f"{type(error).__name__}: {error}")))
    span.set_attribute(sc.ERROR_TYPE, type(error).__name__)


def _error_type(error: BaseException | None) -> str:
    """The `error.type` `_fail` gives a span that `error` (None: the turn's end) cut short."""
    if error is None or isinstance(error, asyncio.CancelledError):
        return _CANCELLED
    return type(error).__name__


def _request_content(request: ProviderRequest) -> dict[str, AttributeValue]:
    """The opt-in content of a model call: history, system prompt, tools offered."""
    content: dict[str, AttributeValue] = {
        sc.INPUT_MESSAGES: messages.dumps(messages.input_messages(request.messages))
    }
    if request.system:
        content[sc.SYSTEM_INSTRUCTIONS] = messages.dumps(
            messages.system_instructions(request.system)
        )
    if request.tools:
        content[sc.TOOL_DEFINITIONS] = messages.dumps(messages.tool_definitions(request.tools))
    return content


def _exit(reason: ExitReason) -> str:
    if isinstance(reason, ObserverHalt):
        return "observer_halt"
    if isinstance(reason, CustomExit):
        return f"custom:{reason.name}"
    return str(reason)


def _usd(amount: Decimal) -> float:
    return float(amount)
