"""A remote MCP server's calls that wait for a person: the provider asks, the turn pauses.

A `HostedMCP` with `require_approval` has the provider stop before it runs a
call and ask (the Responses API's `mcp_approval_request`). The provider hands
the request to the loop as a tool call named `mcp` (`HOSTED_CALL`, the hosted
tool's name, which no function tool of such a turn may have) whose input is
`{"server": label, "tool": name, "arguments": ...}` (`hosted_call_input`) and
whose id is the request's own behind `HOSTED_ID_PREFIX` (`hosted_call_id`), and
the loop pauses on it as on a held call of its own: `pending_approvals` lists
it with `hosted=True`, and the resume decides it. Why the prefix: a call's id is
the API's, never the model's, so the model cannot forge a request by calling a
function named `mcp` (such a call is refused unrun, and never goes back to the
API as a request it did not make, which would fail every later call).

- Approved (`Decision.approve(id)`), the call's result is `APPROVED` and the
  provider sends the API its "yes"; the provider then runs the call with the
  arguments the model wrote. Neither an edited input nor `always` is taken:
  the provider runs the call as asked, and one "yes" for every call of every
  server would be wider than the grant.
- Denied (`Decision.deny(id, reason)`), the result is the usual denial, which
  the provider sends as its "no" with the reason.
- `Decision.answer` is refused: nothing here ran the call.

A request naming a server the turn did not grant, or a call named `mcp` that is
no request, is answered as refused unrun, never shown to a person as if it
were one of the grant's calls.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from ._tool_input import AnsweredCall, RefusedCall
from .approval import ApprovalError, Decision
from .hosted_tools import HostedMCP, HostedTool
from .provider import ToolUsePart

__all__ = [
    "APPROVED",
    "HOSTED_CALL",
    "HOSTED_ID_PREFIX",
    "HostedCallDecisionError",
    "HostedRequest",
    "hosted_call_id",
    "hosted_call_input",
    "hosted_request",
]

HOSTED_CALL: Final = HostedMCP.name
"""The name of the tool call a remote MCP server's approval request arrives as."""

HOSTED_ID_PREFIX: Final = "hosted:"
"""Before the provider's own id of a request, in the id of the call it arrives as."""

APPROVED: Final = "Approved by a person"
"""An approved hosted call's result: the provider sends it as the API's "yes"."""

_KEYS: Final = frozenset({"server", "tool", "arguments"})


class HostedCallDecisionError(ApprovalError):
    """A remote MCP server's pending call got a decision it cannot take.

    An answer (nothing here ran it), an edited input (the provider runs the call
    as the model made it) or `always` (one decision for every call of every
    server would be wider than the grant).
    """


def hosted_call_input(server: str, tool: str, arguments: JsonValue) -> dict[str, JsonValue]:
    """The input of the tool call an approval request arrives as: which server, tool, given what."""
    return {"server": server, "tool": tool, "arguments": arguments}


def hosted_call_id(request_id: str) -> str:
    """The id of the tool call an approval request arrives as: the provider's id, prefixed."""
    return f"{HOSTED_ID_PREFIX}{request_id}"


@dataclass(frozen=True, slots=True)
class HostedRequest:
    """What a provider asked about: its id for the request, the server, the tool, the arguments."""

    request_id: str
    server: str
    tool: str
    arguments: JsonValue


def hosted_request(part: ToolUsePart) -> HostedRequest | None:
    """The request `part` stands for when it is a hosted call's (see the module docs), else None.

    Why a provider asks: it sends such a call back as its API's own request item,
    and its result as the API's "yes" or "no", not as a function call.
    """
    asked, call_id = part.input, part.id
    if part.name != HOSTED_CALL or not isinstance(asked, dict) or set(asked) != _KEYS:
        return None
    if not call_id.startswith(HOSTED_ID_PREFIX) or len(call_id) == len(HOSTED_ID_PREFIX):
        return None
    server, tool = asked["server"], asked["tool"]
    if not isinstance(server, str) or not isinstance(tool, str):
        return None
    return HostedRequest(call_id[len(HOSTED_ID_PREFIX) :], server, tool, asked["arguments"])


def approval_servers(tools: Sequence[HostedTool]) -> frozenset[str]:
    """The labels of the remote MCP servers of `tools`, whose calls a provider may ask about.

    Every granted server, not only those with `require_approval`: a provider that
    asks about a call pauses the turn whatever the grant said (the safe side).
    """
    return frozenset(tool.label for tool in tools if isinstance(tool, HostedMCP))


def screened_hosted(call: ToolUsePart, servers: Collection[str]) -> ToolUsePart:
    """`call` as the turn holds it: refused unrun unless a well-formed request of `servers`."""
    if call.name != HOSTED_CALL or isinstance(call, RefusedCall | AnsweredCall):
        return call
    asked = hosted_request(call)
    if asked is None:
        refusal = f"Error: {HOSTED_CALL} is a tool the provider runs; it cannot be called here"
        return RefusedCall(call.id, call.name, call.input, refusal)
    if asked.server not in servers:
        refusal = f"Error: the turn grants no remote MCP server {asked.server!r}"
        return RefusedCall(call.id, call.name, call.input, refusal)
    return call


def approved_hosted(call: ToolUsePart) -> AnsweredCall:
    """An approved hosted `call`, answered unrun: the provider runs it once told "yes"."""
    return AnsweredCall(call.id, call.name, call.input, APPROVED)


def decided_hosted(call: ToolUsePart, decision: Decision) -> ToolUsePart | None:
    """Pending hosted `call` as `decision` leaves it: approved, or None for a denial.

    Raises:
        HostedCallDecisionError: an answer, an edited input or `always`.
    """
    asked = call.input if isinstance(call.input, dict) else {}
    what = f"call {call.id!r} is the remote MCP server {asked.get('server')!r}'s"
    if decision.decision == "answer":
        raise HostedCallDecisionError(
            f"{what}, which the provider runs: approve it (Decision.approve) or deny it"
        )
    if decision.always:
        raise HostedCallDecisionError(
            f"{what}: a remote MCP server's calls are decided one at a time (always is not "
            "taken); to let a tool run without asking, leave it out of "
            "HostedMCP.require_approval"
        )
    if decision.decision == "deny":
        return None
    if decision.input is not None:
        raise HostedCallDecisionError(
            f"{what}, which the provider runs with the model's arguments: approve it "
            "without an edited input, or deny it"
        )
    return approved_hosted(call)
