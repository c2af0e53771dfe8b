"""`ProcessLimits`: the OS limits a child turn runs under, and how a spec's units map to them.

CPU time, address space, open files, processes and file size are set with
`setrlimit` in the child before any of the turn's code runs, so the kernel
enforces them; the wall clock is the parent's deadline. `ResourceLimits`
from a spec overrides `cpu` (CPU seconds: `"30"`, `"30s"`, `"1500ms"`,
`"2min"`, `"1h"`), `memory` (address space: `"512Mi"`, `"2Gi"`, `"1G"`, bytes)
and `disk` (the largest file the turn may write, same units); `gpu` cannot be
enforced and is refused.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Final

from layer0 import ResourceLimits

from .errors import UnsupportedSpecError

__all__ = ["ProcessLimits", "parse_bytes", "parse_seconds"]

_SECONDS: Final = {"": 1.0, "s": 1.0, "ms": 0.001, "min": 60.0, "h": 3600.0}
_BYTES: Final = {
    "": 1,
    "K": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
}
_QUANTITY: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*\Z")


LARGEST: Final = 2**63 - 1
"""The largest limit `setrlimit` takes (a signed 64-bit count); beyond it is refused."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessLimits:
    """Limits on one child turn; None leaves that resource unlimited.

    Why each exists: `cpu_seconds` ends an infinite loop, `memory_bytes` a
    memory hog, `processes` a fork bomb, `open_files` a descriptor leak,
    `file_size_bytes` a disk filler, `wall_clock_seconds` a turn that waits
    forever (a sleeping tool uses no CPU).
    """

    cpu_seconds: float | None = 60.0
    """CPU time of each process (RLIMIT_CPU): SIGXCPU, then SIGKILL a second later."""
    memory_bytes: int | None = 2 * 1024**3
    """Address space of each process (RLIMIT_AS): allocations beyond it fail."""
    open_files: int | None = 256
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    processes: int | None = 64
    """Processes of the child's user (RLIMIT_NPROC); see each environment for how it binds."""
    file_size_bytes: int | None = None
    """The largest file a process may write (RLIMIT_FSIZE)."""
    wall_clock_seconds: float | None = 300.0
    """The whole run, start-up included, measured by the parent."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            # NaN and infinity fail the comparison too: neither is a limit the kernel holds.
            if value is not None and not 0 < value <= LARGEST:
                raise ValueError(
                    f"ProcessLimits.{field.name} must be positive and at most {LARGEST} "
                    f"(what setrlimit takes), not {value!r}"
                )

    def with_spec(self, resources: ResourceLimits | None, *, environment: str) -> ProcessLimits:
        """Return these limits with the spec's `cpu`, `memory` and `disk` put in.

        Raises:
            UnsupportedSpecError: the spec limits GPUs, or a value has no unit we know.
        """
        if resources is None:
            return self
        if resources.gpu is not None:
            raise UnsupportedSpecError(
                environment, f"a GPU limit ({resources.gpu!r})", hint="leave `gpu` unset"
            )
        try:
            cpu = None if resources.cpu is None else parse_seconds(resources.cpu)
            memory = None if resources.memory is None else parse_bytes(resources.memory)
            disk = None if resources.disk is None else parse_bytes(resources.disk)
        except ValueError as exc:
            raise UnsupportedSpecError(environment, "that resource limit", hint=str(exc)) from exc
        return dataclasses.replace(
            self,
            cpu_seconds=self.cpu_seconds if cpu is None else cpu,
            memory_bytes=self.memory_bytes if memory is None else memory,
            file_size_bytes=self.file_size_bytes if disk is None else disk,
        )

    def rlimits(self) -> dict[str, int]:
        """Return the `resource.RLIMIT_*` names and values to set (the child applies them)."""
        cpu = None if self.cpu_seconds is None else max(1, round(self.cpu_seconds))
        values = {
            "RLIMIT_CPU": cpu,
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_size_bytes,
        }
        return {name: value for name, value in values.items() if value is not None}


def parse_seconds(text: str) -> float:
    """Read a duration such as `"30"`, `"30s"`, `"1500ms"`, `"2min"` or `"1h"` as seconds."""
    number, unit = _quantity(text, _SECONDS, "a CPU time such as '30s', '2min' or '1500ms'")
    return number * _SECONDS[unit]


def parse_bytes(text: str) -> int:
    """Read a size such as `"512Mi"`, `"2Gi"`, `"1G"` or `"1048576"` as bytes."""
    number, unit = _quantity(text, _BYTES, "a size such as '512Mi', '2Gi', '1G' or bytes")
    return int(number * _BYTES[unit])


def _quantity(
    text: str, units: dict[str, float] | dict[str, int], expected: str
) -> tuple[float, str]:
    match = _QUANTITY.match(text)
    if match is None or match.group(2) not in units or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not {expected}")
    number, unit = float(match.group(1)), match.group(2)
    if number * units[unit] > LARGEST:
        shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]}"
        raise ValueError(f"{shown!r} is larger than the largest limit the kernel holds")
    return number, unit
