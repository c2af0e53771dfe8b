"""`ProcessEnvironment`: the turn runs in a separate Python process under OS resource limits.

What it guarantees: the turn's code (tools, hooks, context strategy) runs
in its own process, so a crash, a memory hog or an endless loop there ends
that process, not the caller's; CPU time, address space, open files and file
size are kernel limits (`setrlimit`); the wall clock is the parent's
deadline; the child sees only the environment variables it is given, starts
in its own workspace directory, and never holds the provider's API key or
the state store (the parent makes model calls and serves reads of the
input's session). Every process it starts is killed when the run ends.

What it does not: it shares the caller's filesystem, network and user. A
tool there can read what the caller's user can read (`~/.ssh`, the state
file) and reach the network. Tools that declare `requires_isolation` are
refused. The process limit (RLIMIT_NPROC) counts every process of the
user and does not bind root at all, so it is off by default and refused
when running as root.
"""

from __future__ import annotations

import json
import os

from layer0 import EnvironmentSpec

from ._child_environment import ChildEnvironment, Prepared, user_processes
from ._spec import check_boundaries, network_allowed
from ._supervisor import Launch
from .errors import UnsupportedSpecError
from .limits import ProcessLimits

__all__ = ["ProcessEnvironment"]


class ProcessEnvironment(ChildEnvironment):
    """Runs each turn in a child Python process with kernel-enforced limits (not a sandbox)."""

    label = "ProcessEnvironment"
    isolation = None
    default_limits = ProcessLimits(processes=None)

    def check_spec(self, spec: EnvironmentSpec) -> None:
        """Accept a process boundary and open network; refuse anything it cannot enforce."""
        check_boundaries(spec, environment=self.label, supported={"process"})
        if not network_allowed(spec.network, environment=self.label, default=True):
            raise UnsupportedSpecError(
                self.label,
                "a network restriction",
                hint="the child shares the caller's network; use SandboxEnvironment",
            )

    def launch(self, prepared: Prepared, spec: EnvironmentSpec) -> Launch:
        """Start `python -I -m neuron_env_sandbox._child` in the workspace."""
        limits = prepared.limits
        rlimits = limits.rlimits()
        if limits.processes is not None:
            if os.geteuid() == 0:
                raise UnsupportedSpecError(
                    self.label,
                    "a process limit when running as root (RLIMIT_NPROC does not bind root)",
                    hint="use SandboxEnvironment, which drops to an unprivileged user",
                )
            rlimits["RLIMIT_NPROC"] = user_processes() + limits.processes
        settings = {
            "rlimits": rlimits,
            "drop_to": None,
            "isolation": None,
            "sys_path": self.sys_path(),
        }
        return Launch(
            argv=self.python_argv(json.dumps(settings)),
            env=prepared.env,
            cwd=str(prepared.workspace),
            label=self.label,
            wall_clock=limits.wall_clock_seconds,
            cpu_seconds=limits.cpu_seconds,
            memory_bytes=limits.memory_bytes,
            secrets=prepared.secrets,
        )
