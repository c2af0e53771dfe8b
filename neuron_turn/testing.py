"""Test doubles for agents built on NeuronTurn: providers that need no network.

Use them in your own tests: `ScriptedProvider` plays back a fixed list of
responses and records every request; `FunctionProvider` answers with a
function of the request; `SchemaProvider` needs no script at all, calling
each tool with arguments its schema accepts, then answering with a value
the output type accepts (as pydantic-ai's `TestModel`). All three stream
(`NeuronTurn.stream` uses it):
a response goes out as deltas of `chunk_size` characters, and a script
item may be the exact list of events to stream, an exception among them
cutting the stream off there.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Sequence
from typing import ClassVar, NoReturn, TypeAlias

from moneyed import Money
from pydantic import JsonValue

from layer0 import usd
from neuron_tool import ToolSchema

from .loop._schema_values import value_for
from .loop.effect_tools import EFFECT_TOOL_NAMES
from .loop.memory_tools import MEMORY_TOOL_NAMES
from .loop.model_requests import ModelRequestsBlockedError, block_model_requests
from .loop.output import FINAL_ANSWER_TOOL, TEXT_KIND, OutputMode
from .loop.provider import (
    ContentPart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    StopReason,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from .loop.provider_errors import ProviderError, ProviderResponseError
from .loop.provider_stream import ProviderStreamEvent, deltas_of
from .loop.sampling import SamplingSetting
from .loop.tool_files import describe_file

__all__ = [
    "FunctionProvider",
    "ModelRequestsBlockedError",
    "SchemaProvider",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "UnofferedKindError",
    "UnofferedToolError",
    "block_model_requests",
    "text_response",
    "tool_call_response",
]

ResponseFunction: TypeAlias = Callable[
    [ProviderRequest], ProviderResponse | Awaitable[ProviderResponse]
]
StreamScript: TypeAlias = Sequence[ProviderStreamEvent | BaseException]
"""A scripted stream: the events to yield in order; an exception is raised where it stands."""
ScriptItem: TypeAlias = ProviderResponse | BaseException | StreamScript


class ScriptExhaustedError(ProviderError):
    """A `ScriptedProvider` was asked for more responses than it was given."""


def text_response(
    text: str,
    *,
    usage: TokenUsage | None = None,
    cost: Money | None = None,
    model: str = "scripted",
    stop_reason: StopReason = "end_turn",
) -> ProviderResponse:
    """Return a final answer holding `text` (a convenience for scripts)."""
    return ProviderResponse(
        content=(TextPart(text),),
        stop_reason=stop_reason,
        usage=usage or TokenUsage(),
        model=model,
        cost=usd() if cost is None else cost,
    )


def tool_call_response(
    *calls: ToolUsePart,
    text: str | None = None,
    usage: TokenUsage | None = None,
    cost: Money | None = None,
    model: str = "scripted",
) -> ProviderResponse:
    """Return a response asking for `calls` (a convenience for scripts)."""
    content: list[ContentPart] = [TextPart(text)] if text else []
    content.extend(calls)
    return ProviderResponse(
        content=tuple(content),
        stop_reason="tool_use",
        usage=usage or TokenUsage(),
        model=model,
        cost=usd() if cost is None else cost,
    )


class ScriptedProvider:
    """Returns queued responses in order and records every request it got.

    An exception in the script is raised instead of returned, to script
    provider failures. Running out raises `ScriptExhaustedError`, naming how
    many responses were scripted, rather than returning something made up.

    `stream` yields a response's text, thinking and tool arguments in pieces of
    `chunk_size` characters (None: each part whole), then the response; a
    script item that is a list of events is streamed exactly as given
    (`complete` returns its `ProviderResponse`, or raises its exception).
    """

    model_requests: ClassVar[bool] = False
    """It asks no model: `block_model_requests()` lets it run."""

    def __init__(
        self,
        responses: Iterable[ScriptItem],
        *,
        chunk_size: int | None = None,
        hosted_tools: Collection[str] = (),
        takes_thinking: bool = False,
        takes_sampling: Collection[SamplingSetting] = (),
        takes_strict_tools: bool = False,
        approves_hosted_calls: bool = False,
    ) -> None:
        """Create a provider that will answer with `responses`, one per call.

        `hosted_tools` names the hosted tools it stands in for (`"web_search"`, ...),
        so a turn granting them can be tested; its script answers for them.
        `approves_hosted_calls` lets a turn grant a `HostedMCP` with
        `require_approval` (its script then asks with a call named `mcp`).
        `takes_thinking` lets a turn with a thinking setting run on it, and
        `takes_sampling` one with those sampling settings (`SAMPLING_SETTINGS`:
        all); either setting is on each recorded request. `takes_strict_tools`
        lets a turn offer strict tools (`ToolSchema.strict` on each request).
        """
        self._script = list(responses)
        self._next = 0
        self.chunk_size = chunk_size
        self.hosted_tools = frozenset(hosted_tools)
        self.takes_thinking = takes_thinking
        self.takes_sampling = frozenset(takes_sampling)
        self.takes_strict_tools = takes_strict_tools
        self.approves_hosted_calls = approves_hosted_calls
        self.requests: list[ProviderRequest] = []

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been used."""
        return len(self._script) - self._next

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Record `request` and return (or raise) the next scripted item."""
        item = self._take(request)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, ProviderResponse):
            return item
        return _final(item)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Record `request` and stream the next scripted item (see the class docs)."""
        item = self._take(request)
        if isinstance(item, BaseException):
            raise item
        events = _events(item, self.chunk_size) if isinstance(item, ProviderResponse) else item
        for event in events:
            await asyncio.sleep(0)  # let the consumer run between chunks, as a network would
            if isinstance(event, BaseException):
                raise event
            yield event

    def _take(self, request: ProviderRequest) -> ScriptItem:
        self.requests.append(request)
        if self._next >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedProvider ran out: call {self._next + 1} but only "
                f"{len(self._script)} response(s) were scripted",
                provider="scripted",
            )
        item = self._script[self._next]
        self._next += 1
        return item


class FunctionProvider:
    """Answers each request with `fn(request)`; `fn` may be sync or async.

    `stream` streams that answer in pieces of `chunk_size` characters, as
    `ScriptedProvider` does. Each request is kept in `requests` unless
    `record=False`: a benchmark or a long-lived fake would otherwise hold every
    request (and its history snapshot) for good, which no real provider does.
    """

    model_requests: ClassVar[bool] = False
    """It asks no model: `block_model_requests()` lets it run."""

    def __init__(
        self,
        fn: ResponseFunction,
        *,
        chunk_size: int | None = None,
        record: bool = True,
        hosted_tools: Collection[str] = (),
        takes_thinking: bool = False,
        takes_sampling: Collection[SamplingSetting] = (),
        takes_strict_tools: bool = False,
        approves_hosted_calls: bool = False,
    ) -> None:
        """Create a provider that calls `fn` for every request.

        `hosted_tools`, `takes_thinking`, `takes_sampling`, `takes_strict_tools` and
        `approves_hosted_calls` as `ScriptedProvider`'s.
        """
        self.fn = fn
        self.chunk_size = chunk_size
        self.record = record
        self.hosted_tools = frozenset(hosted_tools)
        self.takes_thinking = takes_thinking
        self.takes_sampling = frozenset(takes_sampling)
        self.takes_strict_tools = takes_strict_tools
        self.approves_hosted_calls = approves_hosted_calls
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Record `request` (unless `record` is off) and return what `fn` makes of it."""
        if self.record:
            self.requests.append(request)
        result = self.fn(request)
        if type(result) is ProviderResponse:
            return result  # the common answer, without `isawaitable`'s ABC check
        if inspect.isawaitable(result):
            return await result
        return result

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Record `request` and stream what `fn` makes of it."""
        response = await self.complete(request)
        for event in _events(response, self.chunk_size):
            await asyncio.sleep(0)
            yield event


class UnofferedToolError(ProviderError):
    """A `SchemaProvider` was told to call a tool that the request does not offer."""


class UnofferedKindError(ProviderError):
    """A `SchemaProvider` was told to answer as a kind of output the request does not offer."""


class SchemaProvider:
    """Answers from the request's own schemas, as pydantic-ai's `TestModel`: no script to write.

    Unless the request's last message holds tool results, it calls each tool
    the request offers (only those named in `call_tools`, if given; by default
    every tool but the effect and memory tools) once, with arguments the
    tool's JSON Schema accepts. Then, or when there is no tool to call, it
    answers: through the final-answer tool (`final_tool`) when offered (tool
    mode; for a choice of output types, the first type's `final_tool_<Type>`),
    with JSON the output schema accepts in native mode, and in prompted mode
    unless `text` is given (for a choice, `{"result": {"kind": <the first
    type>, "data": ...}}`), else with `text`, or by default the last results
    as JSON (`{"add": 5}`; a result with files names them, never their data:
    `{"shot": {"result": "took it", "files": ["an image (image/png)"]}}`).
    `kind` answers a choice as that type instead of the first (`kind="Escalation"`:
    its final-answer tool, or its `{"kind": "Escalation", ...}`), or `"text"` with
    text as above, so a test reaches each branch of a choice.
    Values are made from the schemas alone (`required` properties, bounds,
    enums, formats); a `pattern` may go unmet. It prefers native output, then
    tool mode, then prompted mode.

    Prompted mode's schema is the one the request's `prompted_output` names
    (the schema its system prompt asks for).

    Every request is kept in `requests`; `stream` streams each answer in
    pieces of `chunk_size` characters, as `ScriptedProvider` does.
    """

    model_requests: ClassVar[bool] = False
    """It asks no model: `block_model_requests()` lets it run."""

    output_modes: tuple[OutputMode, ...] = ("native", "tool", "prompted")

    def __init__(
        self,
        *,
        call_tools: Sequence[str] | None = None,
        text: str | None = None,
        final_tool: str = FINAL_ANSWER_TOOL,
        chunk_size: int | None = None,
        kind: str | None = None,
    ) -> None:
        """Create a provider that answers from the schemas of each request."""
        self.call_tools = None if call_tools is None else tuple(call_tools)
        self.text = text
        self.kind = kind
        self.final_tool = final_tool
        self.chunk_size = chunk_size
        self.requests: list[ProviderRequest] = []
        self._calls = 0

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Record `request` and answer it from its schemas.

        Raises:
            UnofferedToolError: `call_tools` names a tool the request does not offer.
            UnofferedKindError: `kind` names a type the request's choice does not hold.
        """
        self.requests.append(request)
        last = request.messages[-1] if request.messages else None
        answered = last is not None and any(isinstance(p, ToolResultPart) for p in last.content)
        calls = [] if answered else self._calls_for(request)
        if calls:
            return tool_call_response(*calls, model="schema")
        return self._answer(request)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Record `request` and stream its answer."""
        response = await self.complete(request)
        for event in _events(response, self.chunk_size):
            await asyncio.sleep(0)
            yield event

    def _answer(self, request: ProviderRequest) -> ProviderResponse:
        """The final answer: a final-answer call, JSON of the output schema, else text."""
        final = None if self.kind == TEXT_KIND else self._final_tool(request)
        if final is not None:
            return tool_call_response(self._call(final), model="schema")
        schema = None if self.kind == TEXT_KIND else self._answer_schema(request)
        if schema is not None:
            value = value_for(self._kind_schema(schema))
            return text_response(json.dumps(value, ensure_ascii=False), model="schema")
        if self.kind not in (None, TEXT_KIND):
            self._refuse_kind([])  # answering text instead would pass a test for the wrong reason
        text = self.text if self.text is not None else _results(request.messages)
        return text_response(text, model="schema")

    def _final_tool(self, request: ProviderRequest) -> ToolSchema | None:
        """The final-answer tool to call: the first offered, or `kind`'s of a choice."""
        finals = [tool for tool in request.tools if self._is_final(tool.name)]
        kinds = [tool for tool in finals if tool.name != self.final_tool]
        if self.kind is None or not kinds:
            return finals[0] if finals else None
        chosen = f"{self.final_tool}_{self.kind}"
        found = next((tool for tool in kinds if tool.name == chosen), None)
        if found is None:
            self._refuse_kind([tool.name.removeprefix(f"{self.final_tool}_") for tool in kinds])
        return found

    def _kind_schema(self, schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """`schema` narrowed to `kind`'s branch when it is a choice's (`{"result": anyOf}`)."""
        branches = _choice_branches(schema)
        if self.kind is None or not branches:
            return schema
        if self.kind not in branches:
            self._refuse_kind(list(branches))
        properties = schema["properties"]
        assert isinstance(properties, dict)  # a choice's, read by `_choice_branches`
        return {**schema, "properties": {**properties, "result": branches[self.kind]}}

    def _refuse_kind(self, offered: list[str]) -> NoReturn:
        if not offered:
            raise UnofferedKindError(
                f"SchemaProvider was told to answer as {self.kind!r}, but the request asks for "
                "text, no typed answer (kind= picks one type of a choice)",
                provider="schema",
            )
        raise UnofferedKindError(
            f"SchemaProvider was told to answer as {self.kind!r}, which the request's choice "
            f"does not hold (it holds: {', '.join(offered)}; or 'text')",
            provider="schema",
        )

    def _answer_schema(self, request: ProviderRequest) -> dict[str, JsonValue] | None:
        """The schema a text answer is to match: native output's, else prompted mode's."""
        if request.output is not None:
            return request.output.schema
        if self.text is not None:
            # Asked for in words only, a schema yields to the text the test chose to answer.
            return None
        return None if request.prompted_output is None else request.prompted_output.schema

    def _calls_for(self, request: ProviderRequest) -> list[ToolUsePart]:
        offered = {tool.name: tool for tool in request.tools if not self._is_final(tool.name)}
        if self.call_tools is None:
            own = EFFECT_TOOL_NAMES | MEMORY_TOOL_NAMES
            return [self._call(tool) for name, tool in offered.items() if name not in own]
        missing = [name for name in self.call_tools if name not in offered]
        if missing:
            raise UnofferedToolError(
                f"SchemaProvider was told to call {', '.join(missing)}, which the request does "
                f"not offer (offered: {', '.join(offered) or 'none'})",
                provider="schema",
            )
        return [self._call(offered[name]) for name in self.call_tools]

    def _is_final(self, name: str) -> bool:
        """Whether `name` is a final-answer tool: `final_tool`, or one type's of a choice."""
        return name == self.final_tool or name.startswith(f"{self.final_tool}_")

    def _call(self, tool: ToolSchema) -> ToolUsePart:
        self._calls += 1
        return ToolUsePart(f"schema_{self._calls}", tool.name, value_for(tool.input_schema))


def _choice_branches(schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """A choice's schema's branches by kind (`{"result": {"anyOf": [...]}}`); else empty."""
    properties = schema.get("properties")
    result = properties.get("result") if isinstance(properties, dict) else None
    branches = result.get("anyOf") if isinstance(result, dict) else None
    found: dict[str, JsonValue] = {}
    for branch in branches if isinstance(branches, list) else ():
        fields = branch.get("properties") if isinstance(branch, dict) else None
        kind = fields.get("kind") if isinstance(fields, dict) else None
        names = kind.get("enum") if isinstance(kind, dict) else None
        if isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
            found[names[0]] = branch
    return found


def _results(messages: Sequence[ProviderMessage]) -> str:
    """The last message's tool results as JSON, by tool name (`"a"` when it holds none)."""
    names = {
        part.id: part.name
        for message in messages[-2:-1]
        for part in message.content
        if isinstance(part, ToolUsePart)
    }
    results: dict[str, JsonValue] = {}
    for part in messages[-1].content if messages else ():
        if isinstance(part, ToolResultPart):
            results.setdefault(names.get(part.tool_use_id, part.tool_use_id), _result(part))
    return json.dumps(results, ensure_ascii=False) if results else "a"


def _result(part: ToolResultPart) -> JsonValue:
    """A result as the answer gives it: its value, with its files named when it has some."""
    value = _json_or_text(part.content)
    if not part.files:
        return value
    # Named, never their data: an answer that quoted a file's base64 would be megabytes.
    return {"result": value, "files": [describe_file(file) for file in part.files]}


def _json_or_text(text: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return text
    return value


def _events(response: ProviderResponse, chunk_size: int | None) -> list[ProviderStreamEvent]:
    return [*deltas_of(response, chunk_size=chunk_size), response]


def _final(script: StreamScript) -> ProviderResponse:
    """What `complete` answers for a scripted stream: its response, or its first exception."""
    for event in script:
        if isinstance(event, BaseException):
            raise event
        if isinstance(event, ProviderResponse):
            return event
    raise ProviderResponseError(
        "the scripted stream holds no ProviderResponse", provider="scripted"
    )
