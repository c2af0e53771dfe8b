"""Elicitation: an MCP server asking, mid tool call, for what only a person knows.

A server's tool may need a confirmation, a choice or a missing value before it
goes on ("book 2 seats on the 14th?"). MCP lets it ask the client
(`elicitation/create`) with a message and a flat JSON Schema of the answer, or
send the user to a URL (an OAuth consent, a payment page). An `MCPClient`
given `elicitation=handler` declares that it can answer and passes each such
request to `handler` as an `Elicitation`; without a handler the client
declares nothing, and a server that asks anyway is told elicitation is not
supported (its tool decides what that means).

The server is untrusted: a requested schema that is not a JSON Schema is
refused before the handler sees it, and the handler's own failures reach the
server as their class name only, its message logged here. An answer the
handler accepts is checked against the requested schema before it is sent,
so a server never receives what it did not ask for. The tool call waits for
the answer within its `timeout`: a handler that asks a person must answer in
time, or decline.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, cast

import mcp_types as types
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.shared.exceptions import MCPError
from pydantic import JsonValue

from ..errors import ToolInputError
from ..schema import InputValidator, InvalidSchemaError

__all__ = ["Elicitation", "ElicitationAnswer", "ElicitationHandler"]

_log = logging.getLogger(__name__)

_MARK: Final = {"neuron_tool": "elicitation"}
"""Sent with this client's refusals: a server of MCP 2026-07-28 does not see them, the
client's own request fails with them, and the mark tells them from the server's errors."""
_NOT_SUPPORTED: Final = "Elicitation not supported"
"""The SDK's refusal when no handler is given (a client declaring no elicitation)."""

Answer: TypeAlias = str | int | float | bool | list[str] | None
"""One field of an accepted answer, as MCP carries it: primitives and lists of strings."""


@dataclass(frozen=True, slots=True)
class Elicitation:
    """What an MCP server asks for: a message, and a schema of the answer or a URL to visit."""

    server: str
    """The name of the `MCPClient` whose server asks."""
    message: str
    """The server's words for the person; untrusted text, to be shown as text."""
    schema: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The JSON Schema of the answer (an object of primitive fields); empty in URL mode."""
    url: str | None = None
    """The page the person is asked to visit (URL mode); None in form mode."""


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """What the handler answers: accept (with the fields asked for), decline, or cancel."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Answer] | None = None
    """The answer's fields, for `accept` in form mode; None otherwise."""

    @classmethod
    def accept(cls, content: Mapping[str, Answer] | None = None) -> ElicitationAnswer:
        """The person answered (`content` matching the requested schema, in form mode)."""
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        """The person said no."""
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationAnswer:
        """The person dismissed the question without saying yes or no."""
        return cls("cancel")


ElicitationHandler: TypeAlias = Callable[[Elicitation], Awaitable[ElicitationAnswer]]
"""`async def handler(elicitation) -> ElicitationAnswer`: answers a server's question."""


def elicitation_callback(server: str, handler: ElicitationHandler) -> ElicitationFnT:
    """The SDK callback that puts `server`'s requests to `handler` and checks its answers."""

    async def answer(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        del context
        if isinstance(params, types.ElicitRequestURLParams):
            return await _answer(
                server, handler, Elicitation(server, params.message, url=params.url)
            )
        schema = dict(params.requested_schema)
        try:
            validator = InputValidator(schema)
        except InvalidSchemaError as exc:
            message = f"the requested schema is not a JSON Schema: {exc}"
            return types.ErrorData(code=types.INVALID_PARAMS, message=message, data=_MARK)
        elicitation = Elicitation(server, params.message, MappingProxyType(schema))
        return await _answer(server, handler, elicitation, validator)

    return answer


async def _answer(
    server: str,
    handler: ElicitationHandler,
    elicitation: Elicitation,
    validator: InputValidator | None = None,
) -> types.ElicitResult | types.ErrorData:
    try:
        answer = await handler(elicitation)
    except Exception as exc:
        # The handler's message may hold what the server should not read.
        _log.exception("the elicitation handler for MCP server %r failed", server)
        message = f"the client could not answer ({type(exc).__name__})"
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message, data=_MARK)
    problem = _problem(answer, validator)
    if problem is not None:
        _log.error(
            "the elicitation handler for MCP server %r answered wrongly: %s", server, problem
        )
        message = "the client's answer did not match the question"
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message, data=_MARK)
    content = None if answer.content is None else dict(answer.content)
    return types.ElicitResult(action=answer.action, content=content)


def refusal(exc: MCPError) -> str | None:
    """Why this client refused a server's question, when `exc` is that refusal; else None.

    A server of MCP 2026-07-28 asks by answering "input required", and the
    client's refusal then fails the client's own request, not the server's.
    """
    if exc.error.data == _MARK:
        return exc.error.message
    if exc.error.code == types.INVALID_REQUEST and exc.error.message == _NOT_SUPPORTED:
        return "it has no elicitation handler (MCPClient(elicitation=...))"
    return None


def _problem(answer: object, validator: InputValidator | None) -> str | None:
    """What is wrong with `answer` to a question with `validator` (None: a URL to visit)."""
    if not isinstance(answer, ElicitationAnswer):
        return f"returned {type(answer).__name__}, not an ElicitationAnswer"
    if answer.action != "accept" or validator is None:
        if answer.content is not None:
            return f"gave content with {answer.action!r}" + (
                " in URL mode" if answer.action == "accept" else ""
            )
        return None
    if answer.content is None:
        return "accepted without content; the server asked for fields"
    try:
        # Its fields are JSON values; a list of strings is one, though not by its type.
        validator.check("", cast("dict[str, JsonValue]", dict(answer.content)))
    except ToolInputError as exc:
        return f"{exc.path}: {exc.message}"
    return None
