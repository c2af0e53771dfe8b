"""`Dispatcher`: `dispatch` and `dispatch_many` of a `layer0.Orchestrator`, on top of `run`.

Convention, shared by the orchestrators: `run(agent, input, workflow_id=...)`
dispatches and returns everything the dispatch produced (a `RunResult`);
`dispatch` is `run` returning only the output; `dispatch_many` dispatches
every task, at most `max_concurrency` at once, and returns one item per task,
in the order given: its output, or the `OrchError` its dispatch raised, so
one failing does not stop the others.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from layer0 import AgentId, DispatchFailed, OrchError, TurnInput, TurnOutput, WorkflowId

__all__ = ["Dispatcher", "RunResult"]


class RunResult(Protocol):
    """What `run` returns: at least the dispatch's final output."""

    @property
    def output(self) -> TurnOutput:
        """The output of the last agent that ran (after handoffs)."""
        ...


ResultT = TypeVar("ResultT", bound=RunResult)


class Dispatcher(ABC, Generic[ResultT]):
    """The dispatching half of an orchestrator; subclasses implement `run`."""

    def __init__(self, *, max_concurrency: int) -> None:
        """Run at most `max_concurrency` dispatches of one `dispatch_many` call at once."""
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency}")
        self._max_concurrency = max_concurrency

    @abstractmethod
    async def run(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> ResultT:
        """Run `agent` on `input` in a workflow, carry out its effects, return the result."""

    async def dispatch(
        self, agent: AgentId, input: TurnInput, *, workflow_id: WorkflowId | None = None
    ) -> TurnOutput:
        """Run `agent` on `input` in a workflow, carry out its effects, return the final output.

        See `run`, which this is, returning only the output.
        """
        return (await self.run(agent, input, workflow_id=workflow_id)).output

    async def dispatch_many(
        self, tasks: Sequence[tuple[AgentId, TurnInput]]
    ) -> list[TurnOutput | OrchError]:
        """Dispatch every task, at most `max_concurrency` at once.

        Returns one item per task, in the order given: its output, or the
        `OrchError` its dispatch raised. Any other exception becomes a
        `DispatchFailed` with it as the cause.
        """
        gate = asyncio.Semaphore(self._max_concurrency)

        async def one(agent: AgentId, input: TurnInput) -> TurnOutput | OrchError:
            async with gate:
                try:
                    return await self.dispatch(agent, input)
                except OrchError as exc:
                    return exc
                except Exception as exc:
                    # Not raised by design; still, one task's bug must not lose the others.
                    error = DispatchFailed(f"dispatch of agent {agent!r} failed: {exc!r}")
                    error.__cause__ = exc
                    return error

        return list(await asyncio.gather(*(one(agent, input) for agent, input in tasks)))
