"""Errors of neuron-env-sandbox beyond the layer0 ones.

    layer0.EnvError
    ├── layer0.ProvisionFailed
    │   ├── UnsupportedSpecError     the spec asks for what this environment cannot enforce
    │   ├── SandboxUnavailableError  bubblewrap is missing or cannot create its namespaces
    │   └── UnsafeWorkspaceError     a file to write into a kept workspace is a link or no file
    ├── layer0.CredentialFailed
    │   └── MissingCredentialError   a credential reference resolves to nothing
    ├── layer0.ResourceExceeded
    │   └── LimitExceededError       the child overran a limit (CPU, memory, wall clock…)
    ├── layer0.IsolationViolation
    │   └── IsolationRequiredError   a tool that must run isolated was offered outside a sandbox
    └── ChildFailedError             the child crashed, was killed, or broke the protocol

A `layer0.TurnError` raised by the turn inside the child (a `RetryableError`
from the provider, say) crosses back as the same class, so an
orchestrator's retry policy sees what it would see in-process.
"""

from __future__ import annotations

from layer0 import (
    CredentialFailed,
    EnvError,
    IsolationViolation,
    ProvisionFailed,
    ResourceExceeded,
)

__all__ = [
    "ChildFailedError",
    "IsolationRequiredError",
    "LimitExceededError",
    "MissingCredentialError",
    "SandboxUnavailableError",
    "UnsupportedSpecError",
]


class UnsupportedSpecError(ProvisionFailed, ValueError):
    """The `EnvironmentSpec` asks for isolation or limits this environment cannot enforce."""

    def __init__(self, environment: str, what: str, *, hint: str) -> None:
        self.environment = environment
        self.what = what
        super().__init__(f"{environment} cannot enforce {what}; {hint}")


class SandboxUnavailableError(ProvisionFailed):
    """bubblewrap is not installed, or it could not set the sandbox up on this machine."""


class UnsafeWorkspaceError(ProvisionFailed):
    """A file the parent writes into a kept workspace is a link on its path, or not a file.

    A run before may have left it (the child owns the workspace): a symbolic link
    pointing anywhere on the host, or a FIFO an open would wait on forever. The
    parent writes nothing through or into it.
    """

    def __init__(self, environment: str, what: str, path: str, problem: str) -> None:
        self.environment = environment
        self.path = path
        super().__init__(
            f"{environment} did not write {what}: {path!r} in the workspace {problem} "
            "(left by an earlier run?); remove it or use a fresh workspace"
        )


class MissingCredentialError(CredentialFailed, LookupError):
    """A `CredentialRef` names a credential its source does not have (never shows a value)."""

    def __init__(self, name: str, *, source: str) -> None:
        self.name = name
        self.source = source
        super().__init__(f"credential {name!r} is not available from {source}")


class LimitExceededError(ResourceExceeded):
    """The child overran `resource` (`cpu`, `memory`, `wall_clock`, …) and was stopped."""

    def __init__(self, resource: str, message: str) -> None:
        self.resource = resource
        super().__init__(message)


class IsolationRequiredError(IsolationViolation):
    """A tool that declares it must run isolated was about to run where it would not be."""

    def __init__(self, tool: str, environment: str) -> None:
        self.tool = tool
        self.environment = environment
        super().__init__(
            f"tool {tool!r} must run isolated, and {environment} does not isolate it; "
            "run the agent in SandboxEnvironment"
        )


class ChildFailedError(EnvError):
    """The child process crashed, was killed, or sent something that is not the protocol.

    `returncode` is the child's exit status (negative: the signal that ended
    it); `stderr` holds the last lines it wrote there, for diagnosis.
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "") -> None:
        self.returncode = returncode
        self.stderr = stderr
        detail = f"\n--- last lines of the child's stderr ---\n{stderr}" if stderr else ""
        super().__init__(message + detail)
