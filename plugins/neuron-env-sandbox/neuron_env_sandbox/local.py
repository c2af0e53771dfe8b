"""`LocalEnvironment`: the turn runs in this process; what cannot be isolated here is refused.

What it applies: a wall-clock deadline (the turn is cancelled at it),
credentials injected as files (written 0600 before the turn, removed after),
and the check that no tool requiring isolation is offered. What it refuses,
with `UnsupportedSpecError`: any isolation boundary, any network
restriction, resource limits (a kernel limit set here would bind the whole
caller process, not the turn), and credentials as environment variables
(every thread of the process would see them). It is the environment of a
trusted turn, and the baseline the others are measured against.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from layer0 import (
    EnvironmentSpec,
    FileInjection,
    Turn,
    TurnInput,
    TurnOutput,
    continues_partial_turns,
)
from neuron_tool import ToolDyn, ToolRegistry, requires_isolation

from ._spec import check_boundaries, check_credentials, network_allowed, relative_path
from .credentials import CredentialSource, EnvCredentials
from .errors import IsolationRequiredError, LimitExceededError, UnsupportedSpecError

__all__ = ["LocalEnvironment"]

_LABEL = "LocalEnvironment"
_HINT = "use ProcessEnvironment or SandboxEnvironment"


class LocalEnvironment:
    """Runs a turn in the caller's process, refusing clearly what it cannot isolate."""

    def __init__(
        self,
        turn: Turn,
        *,
        credentials: CredentialSource | None = None,
        credentials_dir: str | os.PathLike[str] | None = None,
        wall_clock_seconds: float | None = None,
    ) -> None:
        """Run `turn`; its tools must not require isolation.

        Args:
            turn: the turn to run (any `layer0.Turn`).
            credentials: where `CredentialRef`s resolve (default: environment variables).
            credentials_dir: where file injections are written (relative paths
                resolve there; default: the current directory).
            wall_clock_seconds: the turn is cancelled after this long.

        Raises:
            TypeError: `turn` is not a `layer0.Turn` (a recipe needs a child environment).
            IsolationRequiredError: one of the turn's tools requires isolation.
        """
        if not isinstance(turn, Turn):
            raise TypeError(f"LocalEnvironment runs a layer0.Turn, not {type(turn).__name__}")
        for tool in _tools_of(turn):
            if requires_isolation(tool):
                raise IsolationRequiredError(tool.name, _LABEL)
        self.turn = turn
        self.credentials = credentials if credentials is not None else EnvCredentials()
        self.credentials_dir = Path(credentials_dir) if credentials_dir is not None else Path.cwd()
        self.wall_clock_seconds = wall_clock_seconds

    @property
    def continues_partial_turns(self) -> bool:
        """Whether its turn reads continuations (`layer0.continues_partial_turns`)."""
        return continues_partial_turns(self.turn)

    def __repr__(self) -> str:
        return f"LocalEnvironment(turn={self.turn!r})"

    async def run(self, input: TurnInput, spec: EnvironmentSpec) -> TurnOutput:
        """Run the turn on `input` here, after checking `spec` asks only what can be applied.

        Raises:
            UnsupportedSpecError: `spec` asks for isolation, limits or injections
                that cannot be applied in-process.
            MissingCredentialError: a credential reference resolves to nothing.
            LimitExceededError: the wall-clock deadline passed.
        """
        _check(spec)
        async with self._credential_files(spec):
            try:
                async with asyncio.timeout(self.wall_clock_seconds):
                    return await self.turn.execute(input)
            except TimeoutError as exc:
                raise LimitExceededError(
                    "wall_clock",
                    f"{_LABEL}: the turn ran past its wall-clock limit of "
                    f"{self.wall_clock_seconds:g}s and was cancelled",
                ) from exc

    @contextlib.asynccontextmanager
    async def _credential_files(self, spec: EnvironmentSpec) -> AsyncIterator[None]:
        """Write the spec's file credentials (0600, never over a file); remove them after."""
        written: list[Path] = []
        try:
            for ref in spec.credentials:
                if isinstance(ref.injection, FileInjection):
                    relative = relative_path(
                        ref.injection.path, environment=_LABEL, what="a credential"
                    )
                    path = self.credentials_dir / relative
                    value = await self.credentials.resolve(ref.name)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    written.append(path)
                    with os.fdopen(descriptor, "w") as file:
                        file.write(value)
            yield
        finally:
            for path in written:
                path.unlink(missing_ok=True)


def _check(spec: EnvironmentSpec) -> None:
    check_boundaries(spec, environment=_LABEL, supported=())
    if not network_allowed(spec.network, environment=_LABEL, default=True):
        raise UnsupportedSpecError(_LABEL, "a network restriction", hint=_HINT)
    if spec.resources is not None and any(
        value is not None
        for value in (
            spec.resources.cpu,
            spec.resources.memory,
            spec.resources.disk,
            spec.resources.gpu,
        )
    ):
        raise UnsupportedSpecError(
            _LABEL, "resource limits (they would bind the whole process)", hint=_HINT
        )
    check_credentials(spec.credentials, environment=_LABEL, env_vars=False, files=True)


def _tools_of(turn: Turn) -> list[ToolDyn]:
    registry = getattr(turn, "tools", None)
    return list(registry) if isinstance(registry, ToolRegistry) else []
