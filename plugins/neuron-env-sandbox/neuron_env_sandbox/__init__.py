"""neuron-env-sandbox: layer0 Environments: in-process, a child process, a bubblewrap sandbox."""

from .credentials import CredentialSource, EnvCredentials, StaticCredentials
from .errors import (
    ChildFailedError,
    IsolationRequiredError,
    LimitExceededError,
    MissingCredentialError,
    SandboxUnavailableError,
    UnsafeWorkspaceError,
    UnsupportedSpecError,
)
from .limits import ProcessLimits, parse_bytes, parse_seconds
from .local import LocalEnvironment
from .process import ProcessEnvironment
from .recipe import TurnRecipe
from .sandbox import SandboxEnvironment

__all__ = [
    "ChildFailedError",
    "CredentialSource",
    "EnvCredentials",
    "IsolationRequiredError",
    "LimitExceededError",
    "LocalEnvironment",
    "MissingCredentialError",
    "ProcessEnvironment",
    "ProcessLimits",
    "SandboxEnvironment",
    "SandboxUnavailableError",
    "StaticCredentials",
    "TurnRecipe",
    "UnsafeWorkspaceError",
    "UnsupportedSpecError",
    "parse_bytes",
    "parse_seconds",
]
