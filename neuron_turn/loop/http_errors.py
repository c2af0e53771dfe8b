"""What every HTTP provider does with a failure, for provider-plugin authors.

A plugin keeps only what its API documents: the shape of its error bodies, its
own rate-limit headers, the error codes that change the class a status gives.
The rest is here: hiding keys (`redact`, `body_prefix`, and `redact_response`
for an answer that echoes one), the standard
`Retry-After` headers (`retry_after`), the status table
(`error_class_for_status`) and httpx's exceptions (`transport_errors`)::

    from neuron_turn.loop.http_errors import error_class_for_status, retry_after, transport_errors

    with transport_errors(provider="acme", secrets=(key,), what=f"the Acme API at {url}"):
        response = await client.post(url, json=body)
    if not response.is_success:
        cls = error_class_for_status(response.status_code)
        wait = retry_after(response.headers) if cls.retryable else None
        raise cls(..., provider="acme", status_code=response.status_code, retry_after=wait)

This module imports httpx: import it from a provider module, never from a
plugin's entry-point module, so that listing plugins stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

import httpx
from pydantic import JsonValue

from layer0 import UrlSource

from .hosted_tools import HostedToolCall
from .provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderResponse,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from .provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

__all__ = [
    "REDACTED",
    "body_prefix",
    "error_class_for_status",
    "header_safe_key",
    "redact",
    "redact_response",
    "retry_after",
    "seconds_until",
    "transport_errors",
    "utf8",
]

REDACTED: Final = "[REDACTED]"
"""What `redact` puts where a secret was."""

_BY_STATUS: Final[Mapping[int, type[ProviderError]]] = {
    400: InvalidRequestError,
    401: ProviderAuthenticationError,
    403: ProviderAuthenticationError,
    404: ModelNotFoundError,
    408: ProviderTimeoutError,
    # A conflict (OpenAI: another request holds a lock) clears by itself; SDKs retry it.
    409: ProviderServerError,
    422: InvalidRequestError,
    429: RateLimitError,
    503: ProviderOverloadedError,
    # A gateway gave up waiting for the API: a timeout, whoever reports it.
    504: ProviderTimeoutError,
    # Anthropic's "overloaded"; other APIs and gateways borrowed it.
    529: ProviderOverloadedError,
}


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Return `text` with every non-empty secret in `secrets` replaced by `REDACTED`.

    Longer secrets go first, so a key that contains another is hidden whole. A
    single string counts as one secret, not as its characters.
    """
    for secret in _secret_list(secrets):
        text = text.replace(secret, REDACTED)
    return text


def redact_response(response: ProviderResponse, secrets: Iterable[str | None]) -> ProviderResponse:
    """Return `response` with every secret in its text, arguments and data replaced by `REDACTED`.

    An API (or a proxy before it) that echoes the caller's key in an answer
    must not carry it into the turn's output or stored history. Every string
    is covered, object keys and a file's URL and name included, whatever
    escapes the body used for it.
    The same object comes back when no secret is in it.
    """
    hidden = _secret_list(secrets)
    if not hidden:
        return response
    content = [_redact_part(part, hidden) for part in response.content]
    model = redact(response.model, hidden)
    hosted = [_redact_call(call, hidden) for call in response.hosted_calls]
    if (
        model == response.model
        and all(a is b for a, b in zip(content, response.content, strict=True))
        and all(a is b for a, b in zip(hosted, response.hosted_calls, strict=True))
    ):
        return response
    return replace(response, content=content, model=model, hosted_calls=tuple(hosted))


def _redact_call(call: HostedToolCall, secrets: list[str]) -> HostedToolCall:
    data = _redact_json(call.input, secrets)
    name = redact(call.name, secrets)
    return call if data is call.input and name == call.name else HostedToolCall(name, data)


def utf8(response: httpx.Response) -> httpx.Response:
    """Return `response` set to decode its text as UTF-8, whatever charset it names.

    JSON, NDJSON and server-sent events are UTF-8 by their specifications, and
    httpx decodes by any codec the `content-type` names: `charset=rot13`,
    `hex` or `zlib` (no text encodings) made reading the text raise a bare
    TypeError or AssertionError, and `zlib` would inflate the body unbounded.
    Call it before anything reads the response's text or lines.
    """
    response.encoding = "utf-8"
    return response


def body_prefix(body: bytes | str, *, secrets: Iterable[str | None] = (), limit: int = 200) -> str:
    """Return the first `limit` characters of a body, secrets redacted, to quote in a message.

    Redaction comes before the cut, so no part of a key that straddles it
    survives. Bytes are read as UTF-8, with undecodable bytes replaced.
    """
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return redact(text, secrets)[:limit]


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Return the seconds a response asks to wait before a retry; None when it does not say.

    Reads the standard headers only: `retry-after-ms` first (it is the more
    precise), then `retry-after` as seconds or as an HTTP date. An unreadable
    value is passed over; a wait is never negative. An API's own headers (reset
    times) are the plugin's to consult, before or after this as the API documents.

    Args:
        headers: The response's headers: `httpx.Headers`, or a mapping with lowercase names.
        now: The time a date counts from when the response has no `date` header
            (see `seconds_until`); default: the current time.
    """
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return max(millis / 1000, 0.0)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _finite(raw)
    if seconds is not None:
        return max(seconds, 0.0)
    when = _http_date(raw)
    return None if when is None else seconds_until(when, headers, now=now)


def seconds_until(
    when: datetime, headers: Mapping[str, str], *, now: datetime | None = None
) -> float:
    """Return the seconds from a response until `when`, never negative (a reset time, a retry date).

    The count starts at the response's `date` header, so a skewed local clock
    does not matter; without one, at `now`, else at the current time. A time
    without a zone is taken as UTC.
    """
    reference = _http_date(headers.get("date")) or now or datetime.now(UTC)
    return max((_aware(when) - _aware(reference)).total_seconds(), 0.0)


def error_class_for_status(status: int) -> type[ProviderError]:
    """Return the `ProviderError` class for an HTTP status, by the table every HTTP API shares.

    400 and 422 are an invalid request, 401 and 403 authentication, 404 a model
    not found, 408 and 504 a timeout, 429 a rate limit, 503 and 529 overloaded,
    409 and any other 5xx a server error, any other 4xx an invalid request. A
    status outside 4xx and 5xx gives `ProviderResponseError`: an answer the API
    does not document. An API's own cases (a 429 that is an exhausted quota, a
    5xx whose body says "overloaded") are the plugin's to decide around this.
    """
    known = _BY_STATUS.get(status)
    if known is not None:
        return known
    if 500 <= status <= 599:
        return ProviderServerError
    if 400 <= status <= 499:
        return InvalidRequestError
    return ProviderResponseError


@contextmanager
def transport_errors(
    *, provider: str, secrets: Iterable[str | None] = (), what: str | None = None
) -> Iterator[None]:
    """Re-raise any httpx exception from the block as the matching `ProviderError`, `from` it.

    A timeout becomes `ProviderTimeoutError`; a URL httpx cannot call (an
    unsupported scheme, an invalid URL) `InvalidRequestError`; a body that cannot
    be decoded `ProviderResponseError`; an `HTTPStatusError` (`raise_for_status`)
    the class for its status; any other network or protocol failure
    `ProviderConnectionError`. Other exceptions pass through untouched.

    Args:
        provider: The name the errors carry (`ProviderError.provider`).
        secrets: Keys to redact from the messages (httpx may quote a URL or a header).
        what: What was called, as messages name it, e.g. `"the Acme API at
            https://api.acme.com"`; default: `provider`.
    """
    hidden = _secret_list(secrets)
    subject = what or provider

    def message(outcome: str, exc: Exception) -> str:
        detail = str(exc) or "no detail"
        return redact(f"{subject} {outcome} ({type(exc).__name__}: {detail})", hidden)

    try:
        yield
    except httpx.HTTPStatusError as exc:
        response = exc.response
        cls = error_class_for_status(response.status_code)
        raise cls(
            message(f"answered {response.status_code} {response.reason_phrase}".rstrip(), exc),
            provider=provider,
            status_code=response.status_code,
            retry_after=retry_after(response.headers) if cls.retryable else None,
        ) from exc
    except httpx.TimeoutException as exc:
        raise ProviderTimeoutError(message("timed out", exc), provider=provider) from exc
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        # A base_url without http(s):// fails the same way every time: not retryable.
        raise InvalidRequestError(
            message("cannot be called at that URL", exc), provider=provider
        ) from exc
    except httpx.DecodingError as exc:
        raise ProviderResponseError(
            message("sent a body that cannot be decoded", exc), provider=provider
        ) from exc
    except httpx.ConnectError as exc:
        raise ProviderConnectionError(
            message("could not be reached", exc), provider=provider
        ) from exc
    except (httpx.HTTPError, httpx.StreamError) as exc:
        raise ProviderConnectionError(message("failed mid-call", exc), provider=provider) from exc


def _secret_list(secrets: Iterable[str | None]) -> list[str]:
    # A bare string is one key; iterating it would redact its characters one by one.
    given = (secrets,) if isinstance(secrets, str) else secrets
    found = {secret for secret in given if secret}
    for secret in [s for s in found if not (s.isascii() and s.isprintable())]:
        # httpx and h11 quote a header they refuse escaped (b'Bearer sk-...\n'): that
        # form is hidden too.
        found.add(repr(secret.encode("utf-8", "backslashreplace"))[2:-1])
        found.add(secret.encode("unicode_escape").decode("ascii"))
    return sorted(found, key=len, reverse=True)


def header_safe_key(key: str | None, *, provider: str, source: str) -> str | None:
    """`key` without the space around it (a key file's newline), None when that leaves nothing.

    Why: a key with a control, a space or a non-ASCII character inside cannot go in
    an HTTP header; httpx then failed each call as a retryable connection error
    quoting the header, key and all, or with a bare UnicodeEncodeError.

    Raises:
        ProviderAuthenticationError: what is left holds such a character (not quoted;
            `source` says where the key came from: `api_key=`, an environment variable).
    """
    if key is None or not (key := key.strip()):
        return None
    if key.isascii() and key.isprintable() and " " not in key:
        return key
    raise ProviderAuthenticationError(
        f"{provider}: the API key ({source}) holds a space, a control character or a "
        "non-ASCII character, which no HTTP header can carry; check it was copied whole",
        provider=provider,
    )


def _redact_part(part: ContentPart, secrets: list[str]) -> ContentPart:
    """Return `part`, or a copy of it with `secrets` redacted from each of its strings."""
    if isinstance(part, TextPart):
        text = redact(part.text, secrets)
        return part if text == part.text else replace(part, text=text)
    if isinstance(part, ToolUsePart):
        fields = (part.id, part.name, part.input)
        cleaned = (
            redact(part.id, secrets),
            redact(part.name, secrets),
            _redact_json(part.input, secrets),
        )
        if all(a is b or a == b for a, b in zip(fields, cleaned, strict=True)):
            return part
        return replace(part, id=cleaned[0], name=cleaned[1], input=cleaned[2])
    if isinstance(part, ToolResultPart):
        return _redact_result(part, secrets)
    if isinstance(part, ThinkingPart):
        thinking = redact(part.thinking, secrets)
        return part if thinking == part.thinking else replace(part, thinking=thinking)
    if isinstance(part, ImagePart | DocumentPart):
        return _redact_file(part, secrets)
    assert isinstance(part, RawPart)
    data = _redact_json(part.data, secrets)
    return part if data is part.data else replace(part, data=data)


def _redact_result(part: ToolResultPart, secrets: list[str]) -> ToolResultPart:
    """Return `part`, or a copy with `secrets` redacted from its text and its files."""
    text = redact(part.content, secrets)
    files = tuple(_redact_file(file, secrets) for file in part.files)
    if text == part.content and all(a is b for a, b in zip(files, part.files, strict=True)):
        return part
    return replace(part, content=text, files=files)


def _redact_file(file: ImagePart | DocumentPart, secrets: list[str]) -> ImagePart | DocumentPart:
    """Return `file`, or a copy with `secrets` redacted from its URL and name.

    Base64 data is left as it is: a key in it is not the key's text, and
    changing it would break the file.
    """
    source = file.source
    if isinstance(source, UrlSource) and redact(source.url, secrets) != source.url:
        file = replace(file, source=UrlSource(url=redact(source.url, secrets)))
    if isinstance(file, DocumentPart) and file.name is not None:
        name = redact(file.name, secrets)
        if name != file.name:
            file = replace(file, name=name)
    return file


def _redact_json(value: JsonValue, secrets: list[str]) -> JsonValue:
    """Return `value`, or a copy with `secrets` redacted from every string; never recursing."""
    if not _has_secret(value, secrets):
        return value
    holder: list[JsonValue] = [value]
    pending: list[tuple[list[JsonValue] | dict[str, JsonValue], int | str]] = [(holder, 0)]
    while pending:
        container, slot = pending.pop()
        item = container[slot]  # type: ignore[index]
        if isinstance(item, str):
            container[slot] = redact(item, secrets)  # type: ignore[index]
        elif isinstance(item, dict):
            copy = {redact(key, secrets): child for key, child in item.items()}
            container[slot] = copy  # type: ignore[index]
            pending.extend((copy, key) for key in copy)
        elif isinstance(item, list):
            items = list(item)
            container[slot] = items  # type: ignore[index]
            pending.extend((items, index) for index in range(len(items)))
    return holder[0]


def _has_secret(value: JsonValue, secrets: list[str]) -> bool:
    pending: list[JsonValue] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if any(secret in item for secret in secrets):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _finite(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    # float() reads "nan" and "inf"; neither is a wait.
    return value if math.isfinite(value) else None


def _http_date(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        return parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
