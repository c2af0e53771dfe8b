"""The `ToolError` family: everything `neuron_tool` raises on purpose.

```
ToolError(Exception)
├── ToolNotFoundError(ToolError, LookupError)     unknown tool name
├── ToolInputError(ToolError, ValueError)         input fails the tool's schema
├── ToolRegistrationError(ToolError)              a tool cannot be built or registered
├── ToolCallError(ToolError)                      the tool (or a middleware) raised
├── ToolTimeoutError(ToolError, TimeoutError)     the `timeout` middleware expired
├── ToolPermissionError(ToolError)                the `permission` middleware denied
├── ToolIsolationError(ToolError)                 a tool that must run isolated is not
├── ToolContextError(ToolError)                   the run's deps are not what the tool asks for
├── ToolFileError(ToolError, ValueError)          a file a tool returns is not an image or document
├── ToolPrepareError(ToolError, NonRetryableError) a tool's `prepare` failed
├── ToolSourceError(ToolError)                    a tool source failed or gave a bad tool
│   └── ToolStepSourceError(…, NonRetryableError) a per-step source failed mid-run
├── ToolViewError(ToolError, ValueError)          a tool view cannot be made
├── StrictSchemaError(ToolError, ValueError)      a strict tool's schema has no strict form
├── ExternalToolCallError(ToolError)              an external tool was called to run here
└── MCPBridgeError(ToolError)                     the MCP bridge failed
```

`ModelRetry` (in `neuron_tool.retry`) is deliberately *not* here: it is a
signal for the model, and `except ToolError` must never swallow it.
"""

from __future__ import annotations

from collections.abc import Iterable

from layer0 import NonRetryableError


class ToolError(Exception):
    """Root of every error `neuron_tool` raises; catch it to handle any tool failure."""


class ToolNotFoundError(ToolError, LookupError):
    """Raised when a tool name is not registered."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(_not_found_message(name, self.available))


class ToolInputError(ToolError, ValueError):
    """Raised when a tool's input does not match its input schema.

    `path` is a JSON path into the input (`$.items[2].name`), so the model can
    find and fix the bad value.
    """

    def __init__(self, tool: str, path: str, message: str) -> None:
        self.tool = tool
        self.path = path
        self.message = message
        super().__init__(f"invalid input for tool {tool!r} at {path}: {message}")


class ToolRegistrationError(ToolError):
    """Raised when a tool cannot be built or registered (bad name, schema or signature)."""

    def __init__(self, tool: str, reason: str) -> None:
        self.tool = tool
        self.reason = reason
        super().__init__(f"cannot register tool {tool!r}: {reason}")


class ToolCallError(ToolError):
    """Raised when a tool (or a middleware around it) raises; the original is `__cause__`."""

    def __init__(self, tool: str, message: str) -> None:
        self.tool = tool
        self.message = message
        super().__init__(f"tool {tool!r} failed: {message}")


class ToolTimeoutError(ToolError, TimeoutError):
    """Raised by the `timeout` middleware when a call outlives its limit."""

    def __init__(self, tool: str, seconds: float) -> None:
        self.tool = tool
        self.seconds = seconds
        super().__init__(f"tool {tool!r} timed out after {seconds:g} s")


class ToolPermissionError(ToolError):
    """Raised by the `permission` middleware when its policy denies a call."""

    def __init__(self, tool: str, reason: str) -> None:
        self.tool = tool
        self.reason = reason
        detail = f": {reason}" if reason else ""
        super().__init__(f"permission denied for tool {tool!r}{detail}")


class ToolIsolationError(ToolError):
    """A tool that declares `requires_isolation` was called outside an environment's sandbox."""

    def __init__(self, tool: str) -> None:
        super().__init__(
            f"tool {tool!r} runs only inside a sandbox environment, and this process is not "
            "one; run the agent in a sandbox (neuron-env-sandbox's SandboxEnvironment)"
        )
        self.tool = tool


class ToolContextError(ToolError):
    """A tool asking for `RunContext[Deps]` was called with deps that are not a `Deps`."""

    def __init__(self, tool: str, wanted: str, deps: object) -> None:
        self.tool = tool
        self.wanted = wanted
        # The type only: the deps may hold credentials, which never go into a message.
        super().__init__(
            f"tool {tool!r} asks for RunContext[{wanted}], but the run's deps are "
            f"{'None' if deps is None else 'a ' + type(deps).__name__}; pass deps= "
            "to NeuronTurn or to its execute"
        )


class ToolFileError(ToolError, ValueError):
    """A file given to `ToolReturn` is not an image or a well-formed document block."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(f"file {index} of the tool's return: {reason}")


class ToolPrepareError(ToolError, NonRetryableError):
    """A tool's `prepare` raised, returned what is not a schema or None, or renamed the tool.

    It is the caller's code, run before the model is asked: the turn fails, naming the
    tool, and no orchestrator retries it (the same code fails the same way).
    """

    def __init__(self, tool: str, reason: str) -> None:
        self.tool = tool
        self.reason = reason
        super().__init__(f"the prepare of tool {tool!r} {reason}")


class ToolSourceError(ToolError):
    """A tool source (`neuron_tool.source`) failed to give a run's tools, or gave a bad one.

    The run fails before any model call, naming the source.
    """

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"tool source {source!r} {reason}")


class ToolStepSourceError(ToolSourceError, NonRetryableError):
    """A tool source asked at every step (`per_step`) failed after the run's first model call.

    The turn fails before its next model call, naming the source, with what its
    tools did so far kept (`partial`), as a `prepare` that fails then does.
    """


class ToolViewError(ToolError, ValueError):
    """A tool view (`filtered_tools`, `prefixed_tools`, `renamed_tools`) cannot be made.

    Raised when the view is made, naming the view and what was wrong: a prefix or
    new name no tool may have, a rename of a tool the list does not hold.
    """

    def __init__(self, view: str, reason: str) -> None:
        self.view = view
        self.reason = reason
        super().__init__(f"{view}: {reason}")


class StrictSchemaError(ToolError, ValueError):
    """A tool's input schema has no strict form; `path` says where, `reason` why."""

    def __init__(self, tool: str, path: str, reason: str) -> None:
        self.tool = tool
        self.path = path
        self.reason = reason
        super().__init__(
            f"tool {tool!r} cannot be strict: its input schema at {path} {reason}; "
            "make the tool strict=False, or change its schema"
        )


class ExternalToolCallError(ToolError):
    """An external tool (`neuron_tool.ExternalTool`) was called: its calls are the caller's."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        super().__init__(
            f"tool {tool!r} is external: the turn's caller carries out its calls, which "
            "pause the turn (neuron_turn.pending_approvals); nothing here can run it"
        )


class MCPBridgeError(ToolError):
    """Raised when the MCP bridge cannot reach, list or call its MCP server."""


def _not_found_message(name: str, available: tuple[str, ...]) -> str:
    if not available:
        return f"unknown tool {name!r}; no tools are registered"
    # A near miss is usually a typo by the model; naming it helps it self-correct.
    # difflib is imported here, on the error path: a turn that calls known tools never needs it.
    import difflib

    close = difflib.get_close_matches(name, available, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown tool {name!r}{hint}; available: {', '.join(available)}"
