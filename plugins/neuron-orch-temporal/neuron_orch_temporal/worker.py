"""Hosting agents on Temporal: a worker runs their turns and the workflows around them.

`create_worker` builds a temporalio worker, `run_worker` connects and runs
one until cancelled, and `TemporalWorker` is the same as a
`neuron_turn.Worker` (what `neuron-turn worker --orchestrator temporal` runs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import Any, Final

from temporalio.client import Client
from temporalio.converter import ExternalStorage
from temporalio.worker import Worker

from layer0 import AgentId, EffectPolicy, StateStore, Turn
from neuron_orch_local import CustomEffectHandler, Placement

from .activities import AgentActivities
from .connect import connect
from .names import DEFAULT_ADDRESS, DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE
from .workflow import AgentWorkflow

__all__ = ["TemporalWorker", "create_worker", "run_worker"]

_NO_HANDLERS: Final[Mapping[str, CustomEffectHandler]] = MappingProxyType({})
_NO_OPTIONS: Final[Mapping[str, Any]] = MappingProxyType({})
_NO_POLICIES: Final[Mapping[AgentId, EffectPolicy]] = MappingProxyType({})
_NO_PLACEMENTS: Final[Mapping[AgentId, Placement]] = MappingProxyType({})
_OWN_SESSION_ONLY: Final = EffectPolicy()

# temporalio/sdk-python#300: a process exiting right after its client's
# threads stop aborts about half the time (exit code 134); a short pause
# after shutdown avoids it.
_EXIT_GRACE: Final = 0.5
_HEARTBEAT_THROTTLE: Final = timedelta(seconds=5)
"""The longest a heartbeat waits to be sent: a turn's cancellation and its checkpoint
travel with them."""


def create_worker(
    client: Client,
    *,
    agents: Mapping[AgentId, Turn],
    store: StateStore,
    task_queue: str = DEFAULT_TASK_QUEUE,
    custom_handlers: Mapping[str, CustomEffectHandler] = _NO_HANDLERS,
    ledger: StateStore | None = None,
    worker_options: Mapping[str, Any] = _NO_OPTIONS,
    policies: Mapping[AgentId, EffectPolicy] = _NO_POLICIES,
    default_policy: EffectPolicy = _OWN_SESSION_ONLY,
    environments: Mapping[AgentId, Placement] = _NO_PLACEMENTS,
) -> Worker:
    """Return a worker (not yet running) hosting `agents` over `store` on `task_queue`.

    Run it with `async with worker:` or `await worker.run()`. Every worker
    of a task queue must host the same agents and handlers.

    Args:
        client: a client made by `connect` (it carries the data converter). A
            client given `storage` keeps large payloads out of the history, and
            its turns' outputs may then be larger than a payload; without, an
            output past 2 MiB fails with `PayloadTooLargeError`.
        agents: the turns by name.
        store: where memory effects go; give the agents' turns the same
            store (or a reader of it) to read from.
        task_queue: the queue to poll; dispatches must name the same one.
        custom_handlers: the handler of each `custom` effect type
            (`neuron_orch_local.CustomEffectHandler`, so one handler serves
            both orchestrators). Here it runs in an activity: at least once,
            retried on failure (not on a layer0 error other than
            `RetryableError`, such as `NonRetryableError`: the dispatch fails),
            so make it idempotent (the `EffectContext` names the workflow and
            agent to key it by).
        ledger: where applied memory effects are recorded (default `store`).
        worker_options: more keyword arguments for `temporalio.worker.Worker`
            (concurrency limits, identity, ...). Its heartbeats are sent at most
            every 5 s (`max_heartbeat_throttle_interval`; Temporal's default
            waits up to 0.8 times the heartbeat timeout, 24 s of a 30 s one), so a
            cancellation reaches a turn, and its checkpoint reaches Temporal,
            within a heartbeat or two.
        policies: the effect policy of each agent, by name: a turn whose
            output holds an effect outside it fails with `EffectRefused` and
            none of its effects run (a dispatch's `TurnConfig.effect_policy`
            replaces it for the turn the dispatch starts with).
        default_policy: the policy of agents not in `policies` (default:
            their own session's memory only).
        environments: agents whose turns run in an environment, by name
            (`neuron_orch_local.Placement`, as with `LocalOrchestrator`): the
            turn's activity runs it there, e.g. in a child process or a
            sandbox, and its effects are carried out here, on `store`.

    Raises:
        ValueError: an agent is in both `agents` and `environments`.
        TypeError: a value of `environments` is not a `Placement`.
    """
    activities = AgentActivities(
        agents,
        store,
        custom_handlers=custom_handlers,
        ledger=ledger,
        policies=policies,
        default_policy=default_policy,
        environments=environments,
        external_storage=client.data_converter.external_storage is not None,
    )
    options = {"max_heartbeat_throttle_interval": _HEARTBEAT_THROTTLE, **worker_options}
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentWorkflow],
        activities=activities.all(),  # type: ignore[arg-type]
        **options,
    )


async def run_worker(
    address: str,
    task_queue: str,
    agents: Mapping[AgentId, Turn],
    store: StateStore,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    custom_handlers: Mapping[str, CustomEffectHandler] = _NO_HANDLERS,
    ready: asyncio.Event | None = None,
    policies: Mapping[AgentId, EffectPolicy] = _NO_POLICIES,
    default_policy: EffectPolicy = _OWN_SESSION_ONLY,
    environments: Mapping[AgentId, Placement] = _NO_PLACEMENTS,
    storage: ExternalStorage | None = None,
) -> None:
    """Connect to `address` and host `agents` on `task_queue` until cancelled.

    What `neuron-turn worker --address … --task-queue …` runs. Cancel the
    task (Ctrl-C under `asyncio.run`) to stop: turns in flight are abandoned
    and Temporal retries them on another worker after their heartbeat timeout.

    Args:
        address: the Temporal frontend, `HOST:PORT`.
        task_queue: the queue to poll.
        agents: the turns by name.
        store: where memory effects go.
        namespace: the Temporal namespace.
        custom_handlers: the handler of each `custom` effect type.
        ready: set once the worker polls, for callers that wait on it.
        policies: the effect policy of each agent (see `create_worker`).
        default_policy: the policy of agents not in `policies`.
        environments: agents whose turns run in an environment (see `create_worker`).
        storage: where large payloads are kept out of the history (see `connect`).

    Raises:
        ServerUnavailableError: nothing answers at `address`.
    """
    client = await connect(address, namespace=namespace, storage=storage)
    worker = create_worker(
        client,
        agents=agents,
        store=store,
        task_queue=task_queue,
        custom_handlers=custom_handlers,
        policies=policies,
        default_policy=default_policy,
        environments=environments,
    )
    try:
        async with worker:
            if ready is not None:
                ready.set()
            await asyncio.Event().wait()
    finally:
        await asyncio.sleep(_EXIT_GRACE)


class TemporalWorker:
    """A `neuron_turn.Worker`: hosts agents on a Temporal task queue until cancelled.

    The plugin registers it as the worker `"temporal"`, so `neuron-turn
    worker --address HOST:PORT --task-queue Q` runs one; it is `run_worker`
    with its options given up front. Building one does not connect.
    """

    def __init__(
        self,
        *,
        address: str = DEFAULT_ADDRESS,
        task_queue: str = DEFAULT_TASK_QUEUE,
        namespace: str = DEFAULT_NAMESPACE,
        custom_handlers: Mapping[str, CustomEffectHandler] = _NO_HANDLERS,
        policies: Mapping[AgentId, EffectPolicy] = _NO_POLICIES,
        default_policy: EffectPolicy = _OWN_SESSION_ONLY,
        environments: Mapping[AgentId, Placement] = _NO_PLACEMENTS,
        storage: ExternalStorage | None = None,
    ) -> None:
        """Host on `task_queue` of the Temporal frontend at `address` (`HOST:PORT`).

        Args:
            address: the Temporal frontend, `HOST:PORT`.
            task_queue: the queue to poll; dispatches must name the same one.
            namespace: the Temporal namespace.
            custom_handlers: the handler of each `custom` effect type.
            policies: the effect policy of each agent (see `create_worker`).
            default_policy: the policy of agents not in `policies`.
            environments: agents whose turns run in an environment (see `create_worker`).
            storage: where large payloads are kept out of the history (see `connect`).
        """
        self.address = address
        self.storage = storage
        self.environments = environments
        self.policies = policies
        self.default_policy = default_policy
        self.task_queue = task_queue
        self.namespace = namespace
        self.custom_handlers = custom_handlers
        self.ready = asyncio.Event()
        """Set once the worker polls its task queue."""

    def __repr__(self) -> str:
        return f"TemporalWorker(address={self.address!r}, task_queue={self.task_queue!r})"

    async def run(self, agents: Mapping[AgentId, Turn], store: StateStore) -> None:
        """Host `agents` (their effects go to `store`) until the task is cancelled.

        Raises:
            ServerUnavailableError: nothing answers at the address.
        """
        await run_worker(
            self.address,
            self.task_queue,
            agents,
            store,
            namespace=self.namespace,
            custom_handlers=self.custom_handlers,
            ready=self.ready,
            policies=self.policies,
            default_policy=self.default_policy,
            environments=self.environments,
            storage=self.storage,
        )
