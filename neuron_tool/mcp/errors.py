"""The errors the MCP bridge adds to the `ToolError` family.

```
ToolError
├── MCPBridgeError (neuron_tool.errors)     the bridge cannot reach, list or call its server
│   ├── MCPConnectionError                  the server did not start, was not reached, or was lost
│   │   └── MCPSubscriptionClosedError      ... `close()` ended a `subscribe_resource` under way
│   ├── MCPRequestError                     the server answered a request with a JSON-RPC error
│   │   └── MCPSubscriptionRefusedError     ... refused `subscribe_resource` (`final`: for good)
│   │       ├── MCPSubscriptionFinalError   ... with an error asking again will not change
│   │       └── MCPSubscriptionGaveUpError  ... for now, each time it was asked
│   ├── MCPElicitationError                 the server asked a question this client did not answer
│   ├── MCPSamplingError                    the server asked for the model's words and was refused
│   ├── MCPResponseTooLargeError            its answer was larger than `max_response_bytes`
│   ├── MCPInvalidAnswerError               its answer was not what MCP says it is
│   ├── MCPUnknownPromptError               a prompt it does not list, refused before sending
│   ├── MCPCapabilityError                  what the server does not declare, refused before sending
│   ├── MCPPromptArgumentError              a prompt's arguments, refused before sending
│   │   ├── MCPUndeclaredArgumentError      ... one it (or a template's URI) does not declare
│   │   └── MCPMissingArgumentError         ... a required one left out
│   └── MCPTimeoutError(..., TimeoutError)  the server did not answer in time
│       └── MCPConnectTimeoutError          ... the MCP handshake, within `connect_timeout`
└── MCPToolError                            the server's tool answered with an error result
```
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import MCPBridgeError, ToolError


class MCPConnectionError(MCPBridgeError):
    """Raised when an MCP server cannot be started or reached, or the session with it is lost.

    `stderr` holds the last lines a stdio server wrote to its stderr (empty for
    HTTP servers), which usually say why it stopped. They are a note of the
    error (shown under its traceback), not part of its message: a tool call's
    error message is what the model reads, and a server's stderr is the
    caller's to see (it may print paths, configuration, tokens), not the model's.
    """

    stderr: str

    def __init__(self, server: str, message: str, *, stderr: str = "") -> None:
        self.server = server
        super().__init__(message)
        _keep_stderr(self, stderr)


class MCPSubscriptionClosedError(MCPConnectionError):
    """Raised when `close()` ends a `subscribe_resource(uri)` under way: nothing is subscribed.

    An `MCPConnectionError`, as any call to a closed client is: the client, not the
    server, ended it, and the server never refused it (no `MCPSubscriptionRefusedError`).
    `how` says where the subscribe was ("was asked", "waited to be asked again ...").
    """

    def __init__(self, server: str, label: str, uri: str, how: str) -> None:
        self.uri = uri
        super().__init__(
            server,
            f"{label} was closed while the subscription to resource {uri!r} {how};"
            " nothing is subscribed: after connect(), subscribe again",
        )


class MCPTimeoutError(MCPBridgeError, TimeoutError):
    """Raised when an MCP server does not answer a request (`what`) within `seconds`.

    `stderr` is as for `MCPConnectionError`: a server stuck at start-up often says why there.
    """

    stderr: str

    def __init__(self, server: str, what: str, seconds: float, *, stderr: str = "") -> None:
        self.server = server
        self.what = what
        self.seconds = seconds
        super().__init__(f"MCP server {server!r} did not answer {what} within {seconds:g} s")
        _keep_stderr(self, stderr)


class MCPRequestError(MCPBridgeError):
    """Raised when a live MCP server answers a request (`what`) with a JSON-RPC error.

    `code` and `message` are the server's own, so the model reads what it said: the
    first `MESSAGE_SHOWN` characters of it, as a server may send megabytes (`message`
    keeps it whole for the caller).
    """

    MESSAGE_SHOWN: ClassVar[int] = 2000
    """The most of the server's message the error's text quotes."""

    def __init__(self, server: str, what: str, code: int, message: str) -> None:
        self.server = server
        self.what = what
        self.code = code
        self.message = message
        shown = message[: self.MESSAGE_SHOWN]
        more = f" … [{len(message)} characters in all]" if len(message) > len(shown) else ""
        super().__init__(
            f"MCP server {server!r} answered {what} with the error {shown!r}{more} (code {code})"
        )


class MCPSubscriptionRefusedError(MCPRequestError):
    """Raised when a server refuses `subscribe_resource(uri)`: nothing is left subscribed.

    `code` and `message` are what the server said (the last time it was asked);
    `meaning` is what the code says, in a few words; `final` whether asking
    again cannot change it; `attempts` how many times it was asked, over
    `seconds`. The JSON-RPC code decides `final`, never the words: a subclass
    says which case it is.
    """

    final: bool

    def __init__(
        self,
        server: str,
        uri: str,
        *,
        code: int,
        message: str,
        meaning: str,
        attempts: int,
        seconds: float,
        text: str,
    ) -> None:
        self.server = server
        self.what = f"the subscription to resource {uri!r}"
        self.uri = uri
        self.code = code
        self.message = message
        self.meaning = meaning
        self.attempts = attempts
        self.seconds = seconds
        MCPBridgeError.__init__(self, text)


class MCPSubscriptionFinalError(MCPSubscriptionRefusedError):
    """Raised, after one request, when a server refuses a subscription with a final error.

    Its JSON-RPC code says the request itself is wrong or not served (method not
    found, invalid params, the old resource-not-found, a code MCP reserves), so
    it is not asked again, and asking again later would get the same answer.
    """

    final = True

    def __init__(
        self, server: str, uri: str, *, code: int, message: str, meaning: str, shown: str
    ) -> None:
        super().__init__(
            server,
            uri,
            code=code,
            message=message,
            meaning=meaning,
            attempts=1,
            seconds=0.0,
            text=(
                f"MCP server {server!r} refused the subscription to resource {uri!r} with"
                f" {shown}: asking again will not change it, so it was not asked again"
            ),
        )


class MCPSubscriptionGaveUpError(MCPSubscriptionRefusedError):
    """Raised when a server refused a subscription with an error that may pass, each time asked.

    An internal error (the MCP SDK's own "Subscription limit reached"), a
    timeout, a server error: asked again on the client's `reopen_streams`
    backoff until its attempts were spent (`attempts` requests over `seconds`),
    or asked once if it has none. It may pass later; `message` is the last answer.
    """

    final = False

    def __init__(
        self,
        server: str,
        uri: str,
        *,
        code: int,
        message: str,
        meaning: str,
        shown: str,
        attempts: int,
        seconds: float,
        backoff: bool,
    ) -> None:
        why = (
            "its attempts are spent: at most 3 more on reopen_streams' pauses"
            if backoff
            else "this client asks nothing again (reopen_streams=None)"
        )
        times = "once" if attempts == 1 else f"{attempts} times over {seconds:.3g} s"
        super().__init__(
            server,
            uri,
            code=code,
            message=message,
            meaning=meaning,
            attempts=attempts,
            seconds=seconds,
            text=(
                f"MCP server {server!r} refused the subscription to resource {uri!r} {times}"
                f" ({why}), the last time with {shown}"
            ),
        )


class MCPElicitationError(MCPBridgeError):
    """Raised when a server's question during a request (`what`) went unanswered here.

    The client has no elicitation handler, or its handler failed or answered
    what was not asked (`neuron_tool.mcp.elicitation`; the log says more).
    """

    def __init__(self, server: str, what: str, reason: str) -> None:
        self.server = server
        self.what = what
        self.reason = reason
        super().__init__(
            f"MCP server {server!r} asked a question during {what} that this client did "
            f"not answer: {reason}"
        )


class MCPSamplingError(MCPBridgeError):
    """Raised when a server's request for the client's model during a request (`what`) was refused.

    The client has no sampling handler, the request was one this client does not
    run (too long, unsupported content), or the handler refused or failed
    (`neuron_tool.mcp.sampling`; the log says more).
    """

    def __init__(self, server: str, what: str, reason: str) -> None:
        self.server = server
        self.what = what
        self.reason = reason
        super().__init__(
            f"MCP server {server!r} asked this client's model to write something during {what},"
            f" which this client refused: {reason}"
        )


class MCPResponseTooLargeError(MCPBridgeError):
    """Raised when an MCP server's answer to a request (`what`) is larger than the client's cap.

    `size` is the answer's size in bytes when known (over HTTP the body is
    not read past the cap); `limit` is the client's `max_response_bytes`.
    """

    def __init__(self, server: str, what: str, size: int | None, limit: int) -> None:
        self.server = server
        self.what = what
        self.size = size
        self.limit = limit
        amount = f"{_mib(size)} ({size} bytes)" if size is not None else f"more than {_mib(limit)}"
        super().__init__(
            f"MCP server {server!r} answered {what} with {amount}, more than the {_mib(limit)}"
            f" cap ({limit} bytes, max_response_bytes); ask for less, or raise the cap"
        )


class MCPInvalidAnswerError(MCPBridgeError):
    """Raised when an MCP server's answer to a request (`what`) is not what MCP says it is.

    Wrong types, a role other than user or assistant, base64 that does not
    decode, a pagination cursor sent twice: `reason` says which.
    """

    def __init__(self, server: str, what: str, reason: str) -> None:
        self.server = server
        self.what = what
        self.reason = reason
        super().__init__(f"MCP server {server!r} answered {what} with an invalid answer: {reason}")


class MCPUnknownPromptError(MCPBridgeError):
    """Raised, before any request for it, when a prompt is not one the server lists.

    `available` holds the names it lists, so a caller can tell a typo from a
    server that has none.
    """

    def __init__(self, server: str, prompt: str, available: tuple[str, ...]) -> None:
        self.server = server
        self.prompt = prompt
        self.available = available
        offered = f"it lists {', '.join(map(repr, available))}" if available else "it lists none"
        super().__init__(f"MCP server {server!r} has no prompt {prompt!r} ({offered})")


class MCPCapabilityError(MCPBridgeError):
    """Raised, before any request, for what needs a capability the server does not declare.

    A server declares what it serves in the MCP handshake (`resources.subscribe`,
    `completions`); asking one that did not is refused here, naming the
    `capability` and the request (`what`), rather than left to the server.
    """

    def __init__(self, server: str, capability: str, what: str) -> None:
        self.server = server
        self.capability = capability
        self.what = what
        super().__init__(
            f"MCP server {server!r} does not declare the {capability!r} capability, which"
            f" {what} needs; nothing was sent"
        )


class MCPPromptArgumentError(MCPBridgeError):
    """Raised, before the request, when a prompt's arguments are not the ones it declares.

    `arguments` names the offending ones; the subclass says how they offend. A
    completion's arguments of a resource template are checked alike, against the
    variables of its URI template: `prompt` is then that URI template.
    """

    def __init__(self, server: str, prompt: str, arguments: tuple[str, ...], message: str) -> None:
        self.server = server
        self.prompt = prompt
        self.arguments = arguments
        super().__init__(message)


class MCPUndeclaredArgumentError(MCPPromptArgumentError):
    """Raised, before the request, for arguments the prompt does not declare (`arguments`).

    A server's prompt is untrusted: what it was never told it takes is not sent.
    `of` says what declares them: `"prompt"`, or `"resource template"` for a
    completion of an argument its URI template has no variable of (`declared`
    then holds the variables, `{id}`, `{+path}`, `{?q,lang}` giving `id`,
    `path`, `q` and `lang`).
    """

    def __init__(
        self,
        server: str,
        prompt: str,
        arguments: tuple[str, ...],
        declared: tuple[str, ...],
        *,
        of: str = "prompt",
    ) -> None:
        self.declared = declared
        self.of = of
        takes = f"it declares {', '.join(map(repr, declared))}" if declared else "it declares none"
        super().__init__(
            server,
            prompt,
            arguments,
            f"{of} {prompt!r} of MCP server {server!r} does not declare the argument"
            f"{_plural(arguments)} {', '.join(map(repr, arguments))} ({takes}); nothing was sent",
        )


class MCPMissingArgumentError(MCPPromptArgumentError):
    """Raised, before the request, when arguments the prompt requires (`arguments`) are missing."""

    def __init__(self, server: str, prompt: str, arguments: tuple[str, ...]) -> None:
        super().__init__(
            server,
            prompt,
            arguments,
            f"prompt {prompt!r} of MCP server {server!r} requires the argument"
            f"{_plural(arguments)} {', '.join(map(repr, arguments))}, missing here;"
            " nothing was sent",
        )


def _plural(names: tuple[str, ...]) -> str:
    return "s" if len(names) > 1 else ""


def _mib(size: int) -> str:
    if size >= 2**20:
        return f"{size / 2**20:.1f} MiB"
    return f"{size / 2**10:.1f} KiB"


class MCPConnectTimeoutError(MCPTimeoutError):
    """Raised when starting an MCP server and the MCP handshake take longer than `seconds`.

    Its own class so that a caller can tell a server that never came up from a
    slow tool call; `seconds` is the client's `connect_timeout`.
    """

    def __init__(self, server: str, seconds: float, *, stderr: str = "") -> None:
        self.server = server
        self.what = "the MCP handshake"
        self.seconds = seconds
        MCPBridgeError.__init__(
            self,
            f"MCP server {server!r} did not start and finish the MCP handshake within"
            f" {seconds:g} s (connect_timeout); check its command line or URL",
        )
        _keep_stderr(self, stderr)


class MCPToolError(ToolError):
    """Raised when an MCP server's tool answers with an error result (`isError`).

    The message is the tool's own text, so the model reads what the tool said.
    """

    def __init__(self, server: str, tool: str, message: str) -> None:
        self.server = server
        self.tool = tool
        self.message = message
        super().__init__(f"MCP tool {tool!r} reported an error: {message}")


def _keep_stderr(error: MCPConnectionError | MCPTimeoutError, stderr: str) -> None:
    """Keep a stdio server's last stderr lines on `error`: its `stderr`, and a note."""
    error.stderr = stderr
    if stderr:
        error.add_note(f"last lines of its stderr:\n{stderr}")
