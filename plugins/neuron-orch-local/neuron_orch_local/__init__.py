"""neuron-orch-local: a `layer0.Orchestrator` that runs turns in this process.

`LocalOrchestrator` dispatches to agents, carries out the effects their
turns declare (memory writes on a state store, all or none per turn;
delegations, handoffs, signals, logs, custom effects) and answers queries
about its workflows. Registered with neuron-turn as the orchestrator `"local"`.
"""

from ._log import LOGGER_NAME, TRACE
from ._memory import BatchStateStore, MemoryEffect
from .custom import CustomEffectHandler, EffectContext
from .errors import UnknownQueryError
from .handoff import HANDOFF_KEY, handoff_input
from .orchestrator import LocalOrchestrator
from .result import DispatchResult
from .workflow import Delegation, WorkflowRecord, WorkflowStatus

__all__ = [
    "HANDOFF_KEY",
    "LOGGER_NAME",
    "TRACE",
    "BatchStateStore",
    "CustomEffectHandler",
    "Delegation",
    "DispatchResult",
    "EffectContext",
    "LocalOrchestrator",
    "MemoryEffect",
    "UnknownQueryError",
    "WorkflowRecord",
    "WorkflowStatus",
    "handoff_input",
]
