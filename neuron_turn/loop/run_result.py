"""`RunResult`: what `NeuronTurn.run` returns, the answer typed beside the turn's output.

`execute(TurnInput)` is the protocol's call, the one an orchestrator makes. A
person with a prompt wants `result = await turn.run("...")` and then
`result.output`, as pydantic-ai's `agent.run` and the OpenAI Agents SDK's
`Runner.run` give: the answer as the turn's output type, what the run used,
and the calls it waits on when it paused for approval. The layer0
`TurnOutput` stays at hand (`turn_output`) for everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from layer0 import ExitReason, TurnOutput
from neuron_tool import RunUsage

from .approval import AWAITING_APPROVAL, PendingCall, pending_approvals
from .output import OutputMissingError

__all__ = ["RunResult", "RunSyncError", "UnansweredRunError"]

OutT = TypeVar("OutT")


class UnansweredRunError(OutputMissingError):
    """A run ended without an answer (a limit, a halt, an approval pause); its exit reason says why.

    An `OutputMissingError`, as `output_value` raises for an output holding no result.
    """

    def __init__(self, exit_reason: ExitReason) -> None:
        self.exit_reason = exit_reason
        hint = (
            "; the calls it waits on: result.pending, decided with resume_input"
            if exit_reason == AWAITING_APPROVAL
            else "; result.turn_output holds what it did"
        )
        super().__init__(f"the run ended without an answer (exit reason: {exit_reason!r}){hint}")


class RunSyncError(RuntimeError):
    """`run_sync` was called where an event loop already runs (async code): await `run` there."""


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutT]):
    """One run's answer as the turn's output type, with its `TurnOutput` and usage."""

    turn_output: TurnOutput
    """The turn's output, as `execute` returns it (effects, exit reason, metadata)."""
    _read: Callable[[TurnOutput], OutT]

    @property
    def output(self) -> OutT:
        """The answer: a value of the turn's output type, or its text without one.

        Raises:
            UnansweredRunError: the run did not complete (its exit reason named).
            OutputMissingError: a typed turn's output holds no validated result.
        """
        if self.turn_output.exit_reason != "complete":
            raise UnansweredRunError(self.turn_output.exit_reason)
        return self._read(self.turn_output)

    @property
    def exit_reason(self) -> ExitReason:
        """Why the run stopped: `"complete"` when it answered."""
        return self.turn_output.exit_reason

    @property
    def usage(self) -> RunUsage:
        """The tokens, cost and tool calls the run used."""
        metadata = self.turn_output.metadata
        return RunUsage(
            input_tokens=metadata.tokens_in,
            output_tokens=metadata.tokens_out,
            cost=metadata.cost,
            tool_calls=len(metadata.tools_called),
        )

    @property
    def pending(self) -> list[PendingCall]:
        """The calls a run paused for approval waits on (empty when it did not pause)."""
        return pending_approvals(self.turn_output)
