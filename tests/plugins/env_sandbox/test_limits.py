"""`ProcessLimits`: a spec's units, and what cannot be enforced."""

from __future__ import annotations

import pytest

from layer0 import ResourceLimits
from neuron_env_sandbox import ProcessLimits, UnsupportedSpecError, parse_bytes, parse_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 30.0), ("30s", 30.0), ("1500ms", 1.5), ("2min", 120.0), ("1h", 3600.0)],
)
def test_cpu_times(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize(
    ("text", "size"),
    [("512Mi", 512 * 1024**2), ("2Gi", 2 * 1024**3), ("1G", 10**9), ("4096", 4096)],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_bytes(text) == size


@pytest.mark.parametrize("text", ["", "fast", "500m", "-1", "0"])
def test_unknown_units_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        parse_seconds(text)


def test_a_spec_overrides_cpu_memory_and_disk() -> None:
    limits = ProcessLimits().with_spec(
        ResourceLimits(cpu="10s", memory="1Gi", disk="10Mi"), environment="E"
    )
    assert (limits.cpu_seconds, limits.memory_bytes, limits.file_size_bytes) == (
        10.0,
        1024**3,
        10 * 1024**2,
    )
    assert limits.rlimits()["RLIMIT_AS"] == 1024**3


def test_a_gpu_limit_is_refused() -> None:
    with pytest.raises(UnsupportedSpecError, match="E cannot enforce a GPU limit"):
        ProcessLimits().with_spec(ResourceLimits(gpu="1"), environment="E")


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="cpu_seconds must be positive"):
        ProcessLimits(cpu_seconds=0)
