"""`SandboxEnvironment`: the turn runs in a bubblewrap sandbox, with no network unless granted.

What it guarantees here (Linux, bubblewrap 0.8, user and network namespaces):

- filesystem: an empty root; the system (/usr and the libraries), a few
  files of /etc and the interpreter and packages the turn imports are
  mounted read-only; /tmp is private; the workspace (a fresh directory per
  run unless one is given) is the only writable place and the only host
  directory the turn can change. The caller's home (`~/.ssh`, dotfiles), the
  state file and the rest of the host are not there at all.
- network: a new network namespace with only loopback, unless the spec's
  `NetworkPolicy` allows all traffic; 127.0.0.1 inside is not the host's.
- processes: a new pid namespace (the turn sees only its own processes), a
  new session (no terminal), `--die-with-parent`; when the run ends the
  namespace is killed, so nothing survives it.
- user: started as root, the child drops to a fresh unprivileged uid per run
  (no capabilities), so RLIMIT_NPROC bounds a fork bomb and root-owned
  files are out of reach; started as a user, bubblewrap maps that user into a
  user namespace and the process limit adds to the user's existing count.
- limits: CPU time, address space, open files, processes and file size are
  kernel rlimits; the wall clock is the parent's deadline.
- secrets: only the environment variables given and the credentials the
  spec references are inside; the provider's API key and the state store
  stay in the parent, which makes the model calls and serves reads of the
  input's session only.

What it does not: it is not a VM; it shares the host kernel, so a kernel
exploit escapes it. Per-destination network rules are refused (there is no
filtering proxy): the network is all or nothing. Disk use is bounded per
file (RLIMIT_FSIZE), not in total; /tmp is memory-backed and counts against
no limit but the machine's. CPU time is per process; many processes share
the process limit. seccomp filters are not installed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Mapping
from typing import Any

from layer0 import EnvironmentSpec, TurnInput, TurnOutput

from ._bwrap import WORKSPACE, bwrap_argv
from ._child_environment import ChildEnvironment, Prepared, owned_by, user_processes
from ._code import code_paths
from ._procfs import processes_of
from ._spec import BUBBLEWRAP, check_boundaries, network_allowed
from ._supervisor import Launch
from .errors import ChildFailedError, SandboxUnavailableError
from .limits import ProcessLimits
from .recipe import TurnRecipe

__all__ = ["SandboxEnvironment"]

_UIDS = range(1 << 20, 1 << 30)


class SandboxEnvironment(ChildEnvironment):
    """Runs each turn in a bubblewrap sandbox: read-only system, private workspace, no network.

    Takes `ChildEnvironment`'s arguments (recipe, provider, state,
    credentials, limits, env, files, workspace, plugins), and `bwrap` and
    `run_as`.
    """

    label = "SandboxEnvironment"
    isolation = BUBBLEWRAP
    default_limits = ProcessLimits()

    def __init__(
        self,
        recipe: TurnRecipe | Mapping[str, Any],
        *,
        bwrap: str = "bwrap",
        run_as: int | None = None,
        **options: Any,
    ) -> None:
        """Run turns built from `recipe`; `options` are `ChildEnvironment`'s.

        `bwrap` is looked up on PATH now, so a missing bubblewrap fails early;
        `run_as` is the uid the child drops to when started as root (default:
        a fresh one per run); every process of it is killed when a run ends, so a
        run whose `run_as` already runs processes is refused.

        Raises:
            SandboxUnavailableError: `bwrap` is not installed.
        """
        super().__init__(recipe, **options)
        found = shutil.which(bwrap)
        if found is None:
            raise SandboxUnavailableError(
                f"bubblewrap ({bwrap!r}) is not installed; "
                "install it (Debian: apt-get install bubblewrap)"
            )
        self.bwrap = found
        self.run_as = run_as

    def check_spec(self, spec: EnvironmentSpec) -> None:
        """Accept process, bubblewrap and rule-less network boundaries; refuse the rest."""
        supported = {"process", f"custom:{BUBBLEWRAP}", "network_policy"}
        check_boundaries(spec, environment=self.label, supported=supported)
        network_allowed(spec.network, environment=self.label)

    def workspace_view(self, workspace: object) -> str:
        """The sandbox sees its workspace at `/workspace`."""
        return WORKSPACE

    async def run(self, input: TurnInput, spec: EnvironmentSpec) -> TurnOutput:
        """Run one turn in the sandbox; see `ChildEnvironment.run` for the errors.

        Raises:
            SandboxUnavailableError: bubblewrap could not create the sandbox here, or
                `run_as` names a uid that runs processes now.
        """
        try:
            return await super().run(input, spec)
        except ChildFailedError as exc:
            if exc.stderr.lstrip().startswith("bwrap:"):
                raise SandboxUnavailableError(
                    f"bubblewrap could not create the sandbox: {exc.stderr.strip()}"
                ) from exc
            raise

    def _uid(self) -> int:
        """The uid this run drops to: one no process runs as, since all of its are killed after.

        Raises:
            SandboxUnavailableError: `run_as` names a uid that runs processes now (a user of
                this machine, or another run), which the run's end would kill.
        """
        if self.run_as is None:
            while processes_of(uid := random.SystemRandom().choice(_UIDS)):
                pass
            return uid
        running = processes_of(self.run_as)
        if running:
            raise SandboxUnavailableError(
                f"{self.label} would run as uid {self.run_as}, which runs {len(running)} "
                "process(es) now (a user of this machine, or another run); every process of "
                "the sandbox's uid is killed when its run ends, so give a uid nothing else uses "
                "(or leave run_as unset for a fresh one per run)"
            )
        return self.run_as

    def launch(self, prepared: Prepared, spec: EnvironmentSpec) -> Launch:
        """Start the child module inside `bwrap`."""
        limits = prepared.limits
        rlimits = limits.rlimits()
        as_root = os.geteuid() == 0
        uid = None
        if as_root:
            uid = self._uid()
            owned_by(prepared.workspace, uid)
        elif limits.processes is not None:
            rlimits["RLIMIT_NPROC"] = user_processes() + limits.processes
        settings = {
            "rlimits": rlimits,
            "drop_to": uid,
            "isolation": BUBBLEWRAP,
            "sys_path": self.sys_path(),
        }
        argv = bwrap_argv(
            self.bwrap,
            self.python_argv(json.dumps(settings)),
            workspace=prepared.workspace,
            code=code_paths(self.recipe.plugins),
            network=network_allowed(spec.network, environment=self.label),
            as_root=as_root,
        )
        return Launch(
            argv=argv,
            env=prepared.env,
            cwd=str(prepared.workspace),
            label=self.label,
            wall_clock=limits.wall_clock_seconds,
            cpu_seconds=limits.cpu_seconds,
            memory_bytes=limits.memory_bytes,
            uid=uid,
            signal_as_status=True,
            secrets=prepared.secrets,
        )
