"""The input of a turn the orchestrator starts itself on a signal.

The convention is neuron-orch-local's (`neuron_orch_local.signals`), as
the handoff's input is its `handoff_input`, so the same agents see the
same input on both orchestrators.
"""

from __future__ import annotations

from neuron_orch_local import SIGNAL_KEY, signal_input

__all__ = ["SIGNAL_KEY", "signal_input"]
