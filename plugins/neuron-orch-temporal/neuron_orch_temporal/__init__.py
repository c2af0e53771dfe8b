"""neuron-orch-temporal: durable, multi-machine orchestration of neuron-turn agents on Temporal.

`TemporalOrchestrator` implements `layer0.Orchestrator`: each dispatch is a
Temporal workflow, its turns are activities, and the workflow carries out
the effects they declare. Workers (`create_worker`, `run_worker`, or
`neuron-turn worker`) host the agents and the state store.

Names are loaded on first use, not at import: the plugin module that
neuron-turn loads lives in this package, and must not import temporalio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .activities import AgentActivities
    from .chain import Chain
    from .connect import DATA_CONVERTER, connect
    from .custom import CustomEffectHandler, EffectContext
    from .errors import NoWorkerError, ServerUnavailableError, UnknownQueryError
    from .inputs import HANDOFF_KEY, SIGNAL_KEY, handoff_input, signal_input
    from .ledger import APPLIED_SCOPE, BatchStateStore
    from .messages import Delegation, DispatchResult
    from .names import AWAIT_SIGNAL, DEFAULT_ADDRESS, DEFAULT_TASK_QUEUE, QUERY_TYPES
    from .orchestrator import TemporalOrchestrator
    from .policy import TurnPolicy
    from .worker import create_worker, run_worker
    from .workflow import AgentWorkflow

__all__ = [
    "APPLIED_SCOPE",
    "AWAIT_SIGNAL",
    "DATA_CONVERTER",
    "DEFAULT_ADDRESS",
    "DEFAULT_TASK_QUEUE",
    "HANDOFF_KEY",
    "QUERY_TYPES",
    "SIGNAL_KEY",
    "AgentActivities",
    "AgentWorkflow",
    "BatchStateStore",
    "Chain",
    "CustomEffectHandler",
    "Delegation",
    "DispatchResult",
    "EffectContext",
    "NoWorkerError",
    "ServerUnavailableError",
    "TemporalOrchestrator",
    "TurnPolicy",
    "UnknownQueryError",
    "connect",
    "create_worker",
    "handoff_input",
    "run_worker",
    "signal_input",
]

_HOMES: Final = {
    "APPLIED_SCOPE": "ledger",
    "AWAIT_SIGNAL": "names",
    "DATA_CONVERTER": "connect",
    "DEFAULT_ADDRESS": "names",
    "DEFAULT_TASK_QUEUE": "names",
    "HANDOFF_KEY": "inputs",
    "QUERY_TYPES": "names",
    "SIGNAL_KEY": "inputs",
    "AgentActivities": "activities",
    "AgentWorkflow": "workflow",
    "BatchStateStore": "ledger",
    "Chain": "chain",
    "CustomEffectHandler": "custom",
    "Delegation": "messages",
    "DispatchResult": "messages",
    "EffectContext": "custom",
    "NoWorkerError": "errors",
    "ServerUnavailableError": "errors",
    "TemporalOrchestrator": "orchestrator",
    "TurnPolicy": "policy",
    "UnknownQueryError": "errors",
    "connect": "connect",
    "create_worker": "worker",
    "handoff_input": "inputs",
    "run_worker": "worker",
    "signal_input": "inputs",
}


def __getattr__(name: str) -> object:
    """Import the module holding `name` on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
