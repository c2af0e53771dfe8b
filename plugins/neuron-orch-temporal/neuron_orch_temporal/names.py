"""Names shared by the client, the worker and the workflow: queues, activities, signals.

They are part of the contract between processes: a worker and the clients
dispatching to it must agree on them, so change them only with a new
workflow type name. The query types are neuron-orch-local's `QUERY_TYPES`,
each a Temporal query of that name.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "APPLY_MEMORY",
    "APPROVALS_QUERY",
    "AWAIT_SIGNAL",
    "CUSTOM_EFFECT",
    "DECIDE_UPDATE",
    "DEFAULT_ADDRESS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_TASK_QUEUE",
    "EXECUTE_TURN",
    "INBOX_SIGNAL",
    "KEPT_QUERY",
    "PROGRESS_QUERY",
    "PROGRESS_SIGNAL",
    "RELIST_SIGNAL",
    "SETTLED_UPDATE",
    "WAITING_CALLS",
    "WORKFLOW_TYPE",
]

DEFAULT_ADDRESS: Final = "127.0.0.1:7233"
"""Where a Temporal frontend listens by default (`temporal server start-dev`, on IPv4 loopback)."""

DEFAULT_NAMESPACE: Final = "default"
"""The Temporal namespace used unless told otherwise."""

DEFAULT_TASK_QUEUE: Final = "neuron-turn"
"""The task queue workers poll and dispatches go to unless told otherwise."""

WORKFLOW_TYPE: Final = "neuron.AgentWorkflow"
"""The Temporal workflow type of one dispatch."""

INBOX_SIGNAL: Final = "inbox"
"""The Temporal signal that carries a `layer0.SignalPayload` into a workflow's inbox."""

PROGRESS_SIGNAL: Final = "progress"
"""The Temporal signal by which a streaming turn's activity reports one progress event."""

PROGRESS_QUERY: Final = "progress"
"""The Temporal query answering a workflow's progress events from an index on (see `stream`)."""

DECIDE_UPDATE: Final = "neuron.decide"
"""The Temporal update carrying a person's decisions to a workflow paused for approval."""

RELIST_SIGNAL: Final = "neuron.relist"
"""The Temporal signal by which a delegated agent paused again on its own (decided directly)
tells the workflow whose pause lists its calls (`AwaitingApproval.held_by`) to list them anew."""

SETTLED_UPDATE: Final = "neuron.settled"
"""The Temporal update that answers when a workflow's turn pauses for approval or it ends."""

APPROVALS_QUERY: Final = "approvals"
"""The Temporal query answering what a workflow waits on for approval (or null)."""

KEPT_QUERY: Final = "neuron.kept"
"""The Temporal query answering what a cancelled workflow's turn kept (a `KeptPart`, or null)."""

AWAIT_SIGNAL: Final = "await_signal"
"""The `CustomExit` name by which a turn asks to wait for a signal before its next turn.

A turn exiting with `CustomExit(name="await_signal")` keeps its workflow
open: the next payload delivered to the workflow's inbox starts another turn
of the same agent (see `neuron_orch_temporal.inputs.signal_input`).
"""

EXECUTE_TURN: Final = "neuron.execute_turn"
"""The activity running one agent's turn."""

APPLY_MEMORY: Final = "neuron.apply_memory"
"""The activity applying one turn's memory effects, once."""

CUSTOM_EFFECT: Final = "neuron.custom_effect"
"""The activity handing a `custom` effect to the worker's handler of its type."""

WAITING_CALLS: Final = "neuron.waiting_calls"
"""The activity reading what a paused session waits on now (`neuron_turn.waiting_calls`)."""
