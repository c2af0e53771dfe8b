"""Limits a kernel cannot hold are refused where they are given, never an overflow later."""

from __future__ import annotations

import pytest

from layer0 import ResourceLimits
from neuron_env_sandbox import ProcessEnvironment, ProcessLimits, UnsupportedSpecError
from neuron_env_sandbox.limits import LARGEST

from ._helpers import call_tool


@pytest.mark.parametrize(
    "resources",
    [
        ResourceLimits(cpu="9" * 400),
        ResourceLimits(memory="9" * 400),
        ResourceLimits(memory="99999999999Ti"),
        ResourceLimits(disk=str(2**63)),
    ],
)
def test_a_spec_limit_past_what_the_kernel_holds_is_refused(resources: ResourceLimits) -> None:
    with pytest.raises(UnsupportedSpecError, match=r"that resource limit; .* larger than"):
        ProcessLimits().with_spec(resources, environment="ProcessEnvironment")


@pytest.mark.parametrize(
    "limits",
    [
        {"cpu_seconds": float("inf")},
        {"cpu_seconds": float("nan")},
        {"wall_clock_seconds": float("nan")},
        {"memory_bytes": 2**63},
        {"file_size_bytes": 2**64},
    ],
)
def test_a_limit_past_what_the_kernel_holds_is_refused(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=f"ProcessLimits.{next(iter(limits))} must be"):
        ProcessLimits(**limits)  # type: ignore[arg-type]


def test_the_largest_limits_the_kernel_holds_are_kept() -> None:
    largest = ProcessLimits(memory_bytes=2**63 - 1, cpu_seconds=2.0**62)
    assert largest.rlimits()["RLIMIT_AS"] == 2**63 - 1
    spec = ResourceLimits(memory="1000Ti", cpu="1000000h")
    assert ProcessLimits().with_spec(spec, environment="X").rlimits()["RLIMIT_CPU"] == 3600000000


async def test_a_child_runs_under_the_largest_cpu_limit_the_kernel_holds() -> None:
    # The child gives the CPU limit a hard limit one second above it: not past the largest.
    limits = ProcessLimits(cpu_seconds=LARGEST, processes=None)
    call = await call_tool(ProcessEnvironment, "read_env", {"name": "PATH"}, limits=limits)
    assert not call.result.is_error
