"""neuron-orch-local: a `layer0.Orchestrator` that runs turns in this process.

`LocalOrchestrator` dispatches to agents, carries out the effects their
turns declare (memory writes on a state store, all or none per turn;
delegations, handoffs, signals, logs, custom effects) and answers queries
about its workflows. Registered with neuron-turn as the orchestrator `"local"`.
An agent with a `Placement` runs its turns in that `layer0.Environment` (a
child process, a sandbox); its effects still run here.

The conventions it follows are public here for other orchestrators to follow
too (neuron-orch-temporal does): the dispatch chain (`Chain`), the checks
before a turn's effects run (`check_effects`), the handoff input
(`handoff_input`), the effect policy check (`check_policy`), the same checks
telling a model of a call they would refuse (`call_refusal`), history
appends on any store (`append_history`), turn records (`TurnRecording`),
custom effect handlers, `log` records, query answers (`answer_query`), and
`dispatch`/`dispatch_many` on top of `run` (`Dispatcher`).
`RetryPolicy` is the one retry policy type of every orchestrator;
`FallbackTurn` gives one agent a chain of models to fall back on. A
`NeuronTurn`'s `delegate` calls are answered with the child agent's output
(`DelegationAnswerer`, see `neuron_orch_local.delegation`).
"""

from ._memory import BatchStateStore, MemoryEffect, append_history
from .chain import Chain
from .checks import call_refusal, check_effects, check_policy, effect_owner, require_agent
from .custom import CustomEffectHandler, EffectContext
from .delegation import (
    DELEGATION_LOG,
    DelegationAnswerer,
    check_delegated_resume,
    delegation_answer,
    delegation_record,
)
from .dispatcher import Dispatcher, RunResult
from .errors import MemoryNotAppliedError, UnknownQueryError
from .fallback import ATTEMPTS_LOG, Attempt, FallbackTurn, run_attempts, untried_models
from .handoff import HANDOFF_KEY, handoff_input
from .log import LOGGER_NAME, TRACE, emit_log
from .orchestrator import LocalOrchestrator
from .placement import Placement
from .query import QUERY_TYPES, DelegationLike, WorkflowLike, answer_query
from .recording import RecordedBatchStore, TurnRecording
from .result import DispatchResult
from .retry import MAX_MILLISECONDS, Clock, Milliseconds, RetryPolicy, SystemClock
from .signals import AWAIT_SIGNAL, AWAITING_SIGNAL, SIGNAL_KEY, signal_input
from .streaming import AgentEvent
from .workflow import Delegation, WorkflowRecord, WorkflowStatus

__all__ = [
    "ATTEMPTS_LOG",
    "AWAITING_SIGNAL",
    "AWAIT_SIGNAL",
    "DELEGATION_LOG",
    "HANDOFF_KEY",
    "LOGGER_NAME",
    "MAX_MILLISECONDS",
    "QUERY_TYPES",
    "SIGNAL_KEY",
    "TRACE",
    "AgentEvent",
    "Attempt",
    "BatchStateStore",
    "Chain",
    "Clock",
    "CustomEffectHandler",
    "Delegation",
    "DelegationAnswerer",
    "DelegationLike",
    "DispatchResult",
    "Dispatcher",
    "EffectContext",
    "FallbackTurn",
    "LocalOrchestrator",
    "MemoryEffect",
    "MemoryNotAppliedError",
    "Milliseconds",
    "Placement",
    "RecordedBatchStore",
    "RetryPolicy",
    "RunResult",
    "SystemClock",
    "TurnRecording",
    "UnknownQueryError",
    "WorkflowLike",
    "WorkflowRecord",
    "WorkflowStatus",
    "answer_query",
    "append_history",
    "call_refusal",
    "check_delegated_resume",
    "check_effects",
    "check_policy",
    "delegation_answer",
    "delegation_record",
    "effect_owner",
    "emit_log",
    "handoff_input",
    "require_agent",
    "run_attempts",
    "signal_input",
    "untried_models",
]
