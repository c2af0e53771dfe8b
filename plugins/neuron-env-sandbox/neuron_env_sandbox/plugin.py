"""The `neuron_turn` entry point: registers the environments `local`, `process` and `sandbox`.

Importing the environment classes is cheap (the standard library, layer0
and neuron_turn only), so they are registered directly.
"""

from __future__ import annotations

from neuron_turn import RegisterEnvironment, hookimpl

from .local import LocalEnvironment
from .process import ProcessEnvironment
from .sandbox import SandboxEnvironment


@hookimpl
def register_environments(register: RegisterEnvironment) -> None:
    """Offer `local` (in-process), `process` (a child process) and `sandbox` (bubblewrap)."""
    register("local", LocalEnvironment)
    register("process", ProcessEnvironment)
    register("sandbox", SandboxEnvironment)
