"""The neuron-turn plugin: registers the orchestrator and the worker `"temporal"`.

Imports nothing heavy: temporalio is imported when a factory is called,
so listing plugins stays fast and works without the `temporal` extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from neuron_turn import RegisterOrchestrator, RegisterWorker, hookimpl

if TYPE_CHECKING:
    from .orchestrator import TemporalOrchestrator
    from .worker import TemporalWorker

__all__ = [
    "create_orchestrator",
    "create_temporal_worker",
    "register_orchestrators",
    "register_workers",
]


def create_orchestrator(
    *, agents: object = None, store: object = None, **options: Any
) -> TemporalOrchestrator:
    """Return a `TemporalOrchestrator` built from `options` (`address=`, `task_queue=`, ...).

    `agents` and `store` are accepted and ignored, so a host can pass every
    orchestrator the same options: with Temporal, agents and store live on
    the workers (`neuron-turn worker`). `payload_dir=` keeps large payloads
    in that directory (`large_payloads.directory_storage`).

    Raises:
        ImportError: temporalio is missing; the message says which extra to install.
    """
    del agents, store
    with _needs_temporalio("orchestrator"):
        from .orchestrator import TemporalOrchestrator
    return TemporalOrchestrator(**_with_storage(options))


def create_temporal_worker(**options: Any) -> TemporalWorker:
    """Return a `TemporalWorker` built from `options` (`address=`, `task_queue=`, `namespace=`).

    `payload_dir=` keeps large payloads in that directory, as for the orchestrator.

    Raises:
        ImportError: temporalio is missing; the message says which extra to install.
    """
    with _needs_temporalio("worker"):
        from .worker import TemporalWorker
    return TemporalWorker(**_with_storage(options))


@hookimpl
def register_orchestrators(register: RegisterOrchestrator) -> None:
    """Offer the orchestrator `"temporal"`."""
    register("temporal", create_orchestrator)


@hookimpl
def register_workers(register: RegisterWorker) -> None:
    """Offer the worker `"temporal"`, which hosts agents for the orchestrator `"temporal"`."""
    register("temporal", create_temporal_worker)


def _with_storage(options: dict[str, Any]) -> dict[str, Any]:
    """`options` with `payload_dir` turned into the `storage` keeping payloads there."""
    directory = options.pop("payload_dir", None)
    if directory is None:
        return options
    from .large_payloads import directory_storage

    return {**options, "storage": directory_storage(directory)}


@contextmanager
def _needs_temporalio(what: str) -> Iterator[None]:
    """Turn an ImportError inside into one saying which extra to install."""
    try:
        yield
    except ImportError as exc:
        raise ImportError(
            f"the Temporal {what} needs temporalio ({exc}); "
            "install it with: pip install 'neuron-orch-temporal[temporal]'"
        ) from exc
