"""Errors of the layer0 protocol (Python exceptions, not wire types).

    Layer0Error
    ├── TurnError                a turn failed
    │   ├── ModelError           the model's answer cannot be used
    │   ├── ToolExecutionError   a tool failed in a way the turn cannot absorb
    │   ├── ContextAssemblyError the turn could not build its context (bad history)
    │   ├── RetryableError       the same input may succeed later (carries retry_after)
    │   └── NonRetryableError    the same input will fail again
    ├── OrchError                an orchestrator failed
    │   ├── AgentNotFound
    │   ├── WorkflowNotFound
    │   ├── DispatchFailed
    │   │   └── EffectRefused    an effect outside the agent's EffectPolicy (Python only)
    │   └── SignalFailed
    ├── StateError               a state store failed
    │   ├── NotFound
    │   ├── WriteFailed
    │   │   └── HistoryConflict  the session changed under an exclusive append (Python only)
    │   └── SerializationError
    ├── EnvError                 an environment failed
    │   ├── ProvisionFailed
    │   ├── IsolationViolation
    │   ├── CredentialFailed
    │   └── ResourceExceeded
    └── HookError                a hook failed

An orchestrator decides its retry policy from the class alone:
`RetryableError` means "the same input may succeed later". A `TurnError`
may also say what the turn did before it failed (`partial`), so that the
retry continues from there instead of running those tools again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .partial_turn import PartialTurn
    from .scope import Scope

__all__ = [
    "AgentNotFound",
    "ContextAssemblyError",
    "CredentialFailed",
    "DispatchFailed",
    "EffectRefused",
    "EnvError",
    "HistoryConflict",
    "HookError",
    "IsolationViolation",
    "Layer0Error",
    "ModelError",
    "NonRetryableError",
    "NotFound",
    "OrchError",
    "ProvisionFailed",
    "ResourceExceeded",
    "RetryableError",
    "SerializationError",
    "SignalFailed",
    "StateError",
    "ToolExecutionError",
    "TurnError",
    "WorkflowNotFound",
    "WriteFailed",
]


class Layer0Error(Exception):
    """Root of every protocol error: `except Layer0Error` catches them all."""


class TurnError(Layer0Error):
    """A turn failed; `partial` is what it did first, when a retry should not do it again."""

    partial: PartialTurn | None = None
    """Set by a turn whose tools ran before it failed (see `layer0.PartialTurn`)."""


class ModelError(TurnError):
    """The model's answer cannot be used (truncated, filtered, malformed, provider fault)."""


class ToolExecutionError(TurnError):
    """A tool failed in a way the turn cannot report back to the model."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"tool {tool!r} failed: {message}")
        self.tool = tool
        self.message = message


class ContextAssemblyError(TurnError):
    """The turn could not assemble its context, e.g. stored history that does not parse."""


class RetryableError(TurnError):
    """The same input may succeed later; `retry_after` is the wait in seconds, if known."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NonRetryableError(TurnError):
    """The same input will fail again (bad credentials, invalid request)."""


class OrchError(Layer0Error):
    """An orchestrator failed."""


class AgentNotFound(OrchError, LookupError):
    """No agent is registered under the name dispatched to."""

    def __init__(self, agent: str, message: str | None = None) -> None:
        super().__init__(message or f"no agent named {agent!r}")
        self.agent = agent


class WorkflowNotFound(OrchError, LookupError):
    """No workflow exists with the id signalled or queried."""

    def __init__(self, workflow: str, message: str | None = None) -> None:
        super().__init__(message or f"no workflow with id {workflow!r}")
        self.workflow = workflow


class DispatchFailed(OrchError):
    """A dispatch failed; the cause is chained."""


class EffectRefused(DispatchFailed):
    """A turn declared an effect its agent's `EffectPolicy` does not allow; none of its ran.

    Not a variant of the reference: a Python refinement of `DispatchFailed`.
    """


class SignalFailed(OrchError):
    """A signal could not be delivered."""


class StateError(Layer0Error):
    """A state store failed."""


class NotFound(StateError, LookupError):
    """A key the caller required is not in its scope."""

    def __init__(self, scope: Scope, key: str) -> None:
        super().__init__(f"no key {key!r} in scope {scope!r}")
        self.scope = scope
        self.key = key


class WriteFailed(StateError):
    """A write or delete did not happen; nothing was changed."""


class HistoryConflict(WriteFailed):
    """A history append that asked for an unchanged history found it changed; nothing was written.

    Not a variant of the reference: a Python refinement of `WriteFailed`.
    """

    def __init__(self, session: str, *, expected: int, found: int) -> None:
        super().__init__(
            f"the history of session {session!r} changed while this turn ran: it read "
            f"{expected} message(s) but the session now holds {found}; nothing was appended "
            "(run the turn again to continue from the latest history)"
        )
        self.session = session
        self.expected = expected
        self.found = found


class SerializationError(StateError):
    """A value could not be stored or read back as JSON."""


class EnvError(Layer0Error):
    """An environment failed."""


class ProvisionFailed(EnvError):
    """The environment could not be set up."""


class IsolationViolation(EnvError):
    """Something tried to cross an isolation boundary."""


class CredentialFailed(EnvError):
    """A credential could not be injected."""


class ResourceExceeded(EnvError):
    """A resource limit was exceeded."""


class HookError(Layer0Error):
    """A hook failed."""
