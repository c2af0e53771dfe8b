"""neuron-orch-temporal: durable, multi-machine orchestration of neuron-turn agents on Temporal.

`TemporalOrchestrator` implements `layer0.Orchestrator`: each dispatch is a
Temporal workflow, its turns are activities, and the workflow carries out
the effects they declare. Workers (`create_worker`, `run_worker`,
`TemporalWorker`, or `neuron-turn worker`) host the agents and the state store.

The conventions it shares with neuron-orch-local (`Chain`, `handoff_input`,
`CustomEffectHandler`, `BatchStateStore`, `UnknownQueryError`, ...) are
neuron-orch-local's own objects, re-exported here.

Names are loaded on first use, not at import: the plugin module that
neuron-turn loads lives in this package, and must not import temporalio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from neuron_orch_local import (
        HANDOFF_KEY,
        QUERY_TYPES,
        BatchStateStore,
        Chain,
        CustomEffectHandler,
        EffectContext,
        UnknownQueryError,
        handoff_input,
    )

    from .activities import AgentActivities
    from .approvals import TIMED_OUT_REASON, AwaitingApproval
    from .connect import DATA_CONVERTER, connect, data_converter
    from .errors import (
        CancellationPendingError,
        DecisionsPendingError,
        NoWorkerError,
        PayloadDirectoryError,
        PayloadTooLargeError,
        PruneRefusedError,
        QueryUnansweredError,
        RetentionTooShortError,
        ServerUnavailableError,
        StoredPayloadCorruptError,
        StoredPayloadError,
        StoredPayloadMissingError,
    )
    from .inputs import SIGNAL_KEY, signal_input
    from .large_payloads import DirectoryPayloadDriver, directory_storage
    from .ledger import APPLIED_SCOPE
    from .messages import Delegation, DispatchResult
    from .names import AWAIT_SIGNAL, DEFAULT_ADDRESS, DEFAULT_TASK_QUEUE
    from .orchestrator import TemporalOrchestrator
    from .policy import TurnPolicy
    from .retention import MIN_OLDER_THAN, PrunedFile, PruneReport, prune_payloads
    from .worker import TemporalWorker, create_worker, run_worker
    from .workflow import AgentWorkflow

__all__ = [
    "APPLIED_SCOPE",
    "AWAIT_SIGNAL",
    "DATA_CONVERTER",
    "DEFAULT_ADDRESS",
    "DEFAULT_TASK_QUEUE",
    "HANDOFF_KEY",
    "MIN_OLDER_THAN",
    "QUERY_TYPES",
    "SIGNAL_KEY",
    "TIMED_OUT_REASON",
    "AgentActivities",
    "AgentWorkflow",
    "AwaitingApproval",
    "BatchStateStore",
    "CancellationPendingError",
    "Chain",
    "CustomEffectHandler",
    "DecisionsPendingError",
    "Delegation",
    "DirectoryPayloadDriver",
    "DispatchResult",
    "EffectContext",
    "NoWorkerError",
    "PayloadDirectoryError",
    "PayloadTooLargeError",
    "PruneRefusedError",
    "PruneReport",
    "PrunedFile",
    "QueryUnansweredError",
    "RetentionTooShortError",
    "ServerUnavailableError",
    "StoredPayloadCorruptError",
    "StoredPayloadError",
    "StoredPayloadMissingError",
    "TemporalOrchestrator",
    "TemporalWorker",
    "TurnPolicy",
    "UnknownQueryError",
    "connect",
    "create_worker",
    "data_converter",
    "directory_storage",
    "handoff_input",
    "prune_payloads",
    "run_worker",
    "signal_input",
]

_SHARED: Final = "neuron_orch_local"

# Each name's module, relative to this package, or `_SHARED`.
_HOMES: Final = {
    "APPLIED_SCOPE": ".ledger",
    "AWAIT_SIGNAL": ".names",
    "DATA_CONVERTER": ".connect",
    "DEFAULT_ADDRESS": ".names",
    "DEFAULT_TASK_QUEUE": ".names",
    "HANDOFF_KEY": _SHARED,
    "MIN_OLDER_THAN": ".retention",
    "QUERY_TYPES": _SHARED,
    "SIGNAL_KEY": ".inputs",
    "TIMED_OUT_REASON": ".approvals",
    "AgentActivities": ".activities",
    "AgentWorkflow": ".workflow",
    "AwaitingApproval": ".approvals",
    "BatchStateStore": _SHARED,
    "Chain": _SHARED,
    "CustomEffectHandler": _SHARED,
    "Delegation": ".messages",
    "DirectoryPayloadDriver": ".large_payloads",
    "DispatchResult": ".messages",
    "EffectContext": _SHARED,
    "NoWorkerError": ".errors",
    "PayloadDirectoryError": ".errors",
    "PayloadTooLargeError": ".errors",
    "PruneRefusedError": ".errors",
    "PruneReport": ".retention",
    "PrunedFile": ".retention",
    "RetentionTooShortError": ".errors",
    "CancellationPendingError": ".errors",
    "DecisionsPendingError": ".errors",
    "QueryUnansweredError": ".errors",
    "ServerUnavailableError": ".errors",
    "StoredPayloadCorruptError": ".errors",
    "StoredPayloadError": ".errors",
    "StoredPayloadMissingError": ".errors",
    "TemporalOrchestrator": ".orchestrator",
    "TemporalWorker": ".worker",
    "TurnPolicy": ".policy",
    "UnknownQueryError": _SHARED,
    "connect": ".connect",
    "create_worker": ".worker",
    "data_converter": ".connect",
    "directory_storage": ".large_payloads",
    "handoff_input": _SHARED,
    "prune_payloads": ".retention",
    "run_worker": ".worker",
    "signal_input": ".inputs",
}


def __getattr__(name: str) -> object:
    """Import the module holding `name` on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
