"""`Environment`: runs a turn inside an isolation boundary, with credentials and limits."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import Field, Tag

from ._scalars import U16
from ._tagged import UNIT, ExternalVariant, Frozen, external_union
from .json_value import Json
from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = [
    "ContainerBoundary",
    "CredentialInjection",
    "CredentialRef",
    "CustomBoundary",
    "EnvVarInjection",
    "Environment",
    "EnvironmentSpec",
    "FileInjection",
    "GvisorBoundary",
    "IsolationBoundary",
    "MicroVmBoundary",
    "NetworkAction",
    "NetworkPolicy",
    "NetworkPolicyBoundary",
    "NetworkRule",
    "ProcessBoundary",
    "ResourceLimits",
    "WasmBoundary",
]


class NetworkAction(StrEnum):
    """Whether traffic is let through."""

    ALLOW = "allow"
    DENY = "deny"


class NetworkRule(Frozen):
    """Allow or deny traffic to a destination (and port, if given)."""

    destination: str
    port: U16 | None = None
    action: NetworkAction


class NetworkPolicy(Frozen):
    """The default action, then rules that override it."""

    default: NetworkAction
    rules: list[NetworkRule]


class ProcessBoundary(Frozen):
    """A separate OS process."""

    type: Literal["process"] = "process"


class ContainerBoundary(Frozen):
    """A container, from `image` or the environment's default."""

    type: Literal["container"] = "container"
    image: str | None = None


class GvisorBoundary(Frozen):
    """A gVisor sandbox."""

    type: Literal["gvisor"] = "gvisor"


class MicroVmBoundary(Frozen):
    """A micro virtual machine."""

    type: Literal["micro_vm"] = "micro_vm"


class WasmBoundary(Frozen):
    """A WebAssembly runtime, named or default."""

    type: Literal["wasm"] = "wasm"
    runtime: str | None = None


class NetworkPolicyBoundary(Frozen):
    """Network rules as a boundary of their own."""

    type: Literal["network_policy"] = "network_policy"
    rules: list[NetworkRule]


class CustomBoundary(Frozen):
    """A boundary of the environment's own kind."""

    type: Literal["custom"] = "custom"
    boundary_type: str
    config: Json


IsolationBoundary: TypeAlias = Annotated[
    ProcessBoundary
    | ContainerBoundary
    | GvisorBoundary
    | MicroVmBoundary
    | WasmBoundary
    | NetworkPolicyBoundary
    | CustomBoundary,
    Field(discriminator="type"),
]
"""One layer of isolation; tagged by `"type"`."""


class EnvVarInjection(ExternalVariant):
    """Put the credential in an environment variable: `{"env_var": {"var_name": …}}`."""

    tag: ClassVar[str] = "env_var"
    var_name: str


class FileInjection(ExternalVariant):
    """Write the credential to a file: `{"file": {"path": …}}`."""

    tag: ClassVar[str] = "file"
    path: str


CredentialInjection: TypeAlias = Annotated[
    Annotated[Literal["sidecar"], Tag(UNIT)]
    | Annotated[EnvVarInjection, Tag("env_var")]
    | Annotated[FileInjection, Tag("file")],
    *external_union(("sidecar",), (EnvVarInjection, FileInjection), name="credential_injection"),
]
"""How a credential reaches the turn: `"sidecar"`, an env var or a file."""


class CredentialRef(Frozen):
    """A named credential and how it is injected (never its value)."""

    name: str
    injection: CredentialInjection


class ResourceLimits(Frozen):
    """Resource caps in the environment's own units ("500m", "2Gi")."""

    cpu: str | None = None
    memory: str | None = None
    disk: str | None = None
    gpu: str | None = None


class EnvironmentSpec(Frozen):
    """Isolation, credentials, resources and network for one run."""

    isolation: list[IsolationBoundary] = Field(default_factory=list)
    credentials: list[CredentialRef] = Field(default_factory=list)
    resources: ResourceLimits | None = None
    network: NetworkPolicy | None = None


@runtime_checkable
class Environment(Protocol):
    """Runs a turn under an `EnvironmentSpec`."""

    async def run(self, input: TurnInput, spec: EnvironmentSpec) -> TurnOutput:
        """Run one turn on `input` inside the environment `spec` describes."""
        ...
