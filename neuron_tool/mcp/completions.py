"""Completions: an MCP server's suggestions for an argument of a prompt or a resource template.

`MCPClient.complete(ref, argument_name, value)` asks the server (MCP
`completion/complete`) how to complete `value`, what has been typed of the
argument `argument_name` of the prompt or resource template `ref`, as an editor
completes a word. The server must declare the `completions` capability, else
`MCPCapabilityError` is raised before any request. Its answer is checked as
other answers are: at most 100 strings, as MCP says, and a total no smaller
than what it sent; anything else is an `MCPInvalidAnswerError` saying where.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import mcp_types as types

from .errors import MCPInvalidAnswerError
from .prompts import MCPPrompt
from .resources import MCPResourceTemplate

__all__ = ["MAX_COMPLETION_VALUES", "MCPCompletion"]

MAX_COMPLETION_VALUES: Final = 100
"""The most values one completion may hold, as MCP says."""


@dataclass(frozen=True)
class MCPCompletion:
    """An MCP server's completions of an argument: its `values`, best first, and how many more.

    `total` is how many the server has in all, if it said; `has_more` whether
    there are more than it sent, which a longer `value` narrows down.
    """

    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False


def completion_request(ref: MCPPrompt | MCPResourceTemplate, argument: str) -> str:
    """How messages name the completion of `argument` of `ref`."""
    if isinstance(ref, MCPPrompt):
        return f"the completion of argument {argument!r} of prompt {ref.name!r}"
    return f"the completion of argument {argument!r} of resource template {ref.uri_template!r}"


def reference(
    ref: MCPPrompt | MCPResourceTemplate,
) -> types.PromptReference | types.ResourceTemplateReference:
    """The SDK's reference to `ref`, for the request."""
    if isinstance(ref, MCPPrompt):
        return types.PromptReference(name=ref.name)
    return types.ResourceTemplateReference(uri=ref.uri_template)


def completion_of(result: types.CompleteResult, *, server: str, what: str) -> MCPCompletion:
    """Our `MCPCompletion` for the server's answer to `what`.

    Raises:
        MCPInvalidAnswerError: More than 100 values, or a total below their number.
    """
    completion = result.completion
    count = len(completion.values)
    if count > MAX_COMPLETION_VALUES:
        reason = (
            f"completion.values holds {count} values, more than the {MAX_COMPLETION_VALUES}"
            " MCP allows"
        )
        raise MCPInvalidAnswerError(server, what, reason)
    total = completion.total
    if total is not None and total < count:
        reason = f"completion.total is {total}, fewer than the {count} values it sent"
        raise MCPInvalidAnswerError(server, what, reason)
    return MCPCompletion(tuple(completion.values), total, bool(completion.has_more))
