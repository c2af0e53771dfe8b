"""What each environment can enforce of an `EnvironmentSpec`, and the clear refusals otherwise."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import PurePosixPath

from layer0 import (
    CredentialRef,
    CustomBoundary,
    EnvironmentSpec,
    EnvVarInjection,
    FileInjection,
    NetworkAction,
    NetworkPolicy,
    NetworkPolicyBoundary,
)

from .errors import UnsupportedSpecError

__all__ = [
    "BUBBLEWRAP",
    "check_boundaries",
    "check_credentials",
    "network_allowed",
    "relative_path",
]

BUBBLEWRAP = "bubblewrap"
"""The `CustomBoundary.boundary_type` naming this plugin's sandbox."""

_SANDBOX_HINT = "run the agent in SandboxEnvironment (bubblewrap)"


def check_boundaries(
    spec: EnvironmentSpec, *, environment: str, supported: Collection[str]
) -> None:
    """Refuse every isolation boundary of `spec` whose kind is not in `supported`.

    Kinds are the boundaries' `type` tags, and `custom:<boundary_type>` for custom ones.
    """
    for boundary in spec.isolation:
        kind: str = boundary.type
        if isinstance(boundary, CustomBoundary):
            kind = f"custom:{boundary.boundary_type}"
        if isinstance(boundary, NetworkPolicyBoundary) and "network_policy" in supported:
            network_allowed(
                NetworkPolicy(default=NetworkAction.DENY, rules=boundary.rules),
                environment=environment,
            )
            continue
        if kind not in supported:
            hint = f"it provides: {', '.join(sorted(supported)) or 'no isolation at all'}"
            raise UnsupportedSpecError(environment, f"the isolation boundary {kind!r}", hint=hint)


def network_allowed(
    policy: NetworkPolicy | None, *, environment: str, default: bool = False
) -> bool:
    """Return whether `policy` lets all traffic through (True) or none (False).

    Per-destination rules would need a filtering proxy, which this plugin does
    not have; they are refused rather than half-enforced. None means `default`.
    """
    if policy is None:
        return default
    allow_rules = [rule for rule in policy.rules if rule.action is NetworkAction.ALLOW]
    deny_rules = [rule for rule in policy.rules if rule.action is NetworkAction.DENY]
    if policy.default is NetworkAction.ALLOW and not deny_rules:
        return True
    if policy.default is NetworkAction.DENY and not allow_rules:
        return False
    rules = allow_rules if policy.default is NetworkAction.DENY else deny_rules
    shown = ", ".join(f"{r.destination}{f':{r.port}' if r.port else ''}" for r in rules)
    raise UnsupportedSpecError(
        environment,
        f"per-destination network rules ({shown})",
        hint="allow all traffic or none (default allow or deny, with no exceptions)",
    )


def check_credentials(
    credentials: Collection[CredentialRef], *, environment: str, env_vars: bool, files: bool
) -> None:
    """Refuse injections this environment cannot make (sidecars, and what it says it cannot)."""
    for ref in credentials:
        injection = ref.injection
        if isinstance(injection, EnvVarInjection) and not env_vars:
            raise UnsupportedSpecError(
                environment,
                f"credential {ref.name!r} as an environment variable",
                hint="an in-process variable is seen by everything in the process; "
                "use a file injection or ProcessEnvironment",
            )
        if isinstance(injection, FileInjection):
            if not files:
                raise UnsupportedSpecError(
                    environment, f"credential {ref.name!r} as a file", hint=_SANDBOX_HINT
                )
            relative_path(injection.path, environment=environment, what=f"credential {ref.name!r}")
        if injection == "sidecar":
            raise UnsupportedSpecError(
                environment,
                f"credential {ref.name!r} through a sidecar",
                hint="inject it as an environment variable or a file",
            )


def relative_path(path: str, *, environment: str, what: str) -> PurePosixPath:
    """Return `path` as a path inside the workspace; refuse absolute paths and `..`."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise UnsupportedSpecError(
            environment,
            f"writing {what} to {path!r}",
            hint="give a relative path without '..': it is written inside the workspace",
        )
    return pure
