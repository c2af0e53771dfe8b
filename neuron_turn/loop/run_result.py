"""`RunResult`: what `NeuronTurn.run` returns, the answer typed beside the turn's output.

`execute(TurnInput)` is the protocol's call, the one an orchestrator makes. A
person with a prompt wants `result = await turn.run("...")` and then
`result.output`, as pydantic-ai's `agent.run` and the OpenAI Agents SDK's
`Runner.run` give: the answer as the turn's output type, what the run used,
and the calls it waits on when it paused for approval. The layer0
`TurnOutput` stays at hand (`turn_output`) for everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from layer0 import ExitReason, TurnOutput
from neuron_tool import RunUsage

from .approval import AWAITING_APPROVAL, PendingCall, pending_approvals
from .message_history import messages_to_json, settled
from .output import OutputMissingError
from .provider import ProviderMessage

__all__ = ["RunArgumentsError", "RunResult", "RunSyncError", "UnansweredRunError", "usage_of"]

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


class RunArgumentsError(TypeError):
    """`run`'s arguments do not make one run (a message and decisions, a session and a history).

    Raised before anything runs; the message names the arguments and what to give instead.
    """


class RunSyncError(RuntimeError):
    """`run_sync` was called where an event loop already runs (async code): await `run` there."""


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutT]):
    """One run's answer as the turn's output type, with its `TurnOutput` and usage."""

    turn_output: TurnOutput
    """The turn's output, as `execute` returns it (effects, exit reason, metadata)."""
    _read: Callable[[TurnOutput], OutT]
    _history: Sequence[ProviderMessage] = ()
    _new: Sequence[ProviderMessage] = ()

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
        return usage_of(self.turn_output)

    @property
    def pending(self) -> list[PendingCall]:
        """The calls a run paused for approval waits on (empty when it did not pause)."""
        return pending_approvals(self.turn_output)

    def all_messages(self) -> list[ProviderMessage]:
        """The conversation after this run: the history it went on from, then its own messages.

        Each message's parts are a tuple (as `messages_from_json` reads them).

        Pass it to the next run (`run(..., message_history=result.all_messages())`) to go
        on without a store, as pydantic-ai's `all_messages()`. A run on a `session`
        gives the history it read from the store with its messages after it.
        """
        return settled([*self._history, *self._new])

    def new_messages(self) -> list[ProviderMessage]:
        """The messages this run added: its user message (none on a resume) to its answer."""
        return settled(self._new)

    def all_messages_json(self) -> bytes:
        """`all_messages()` as JSON, the stored history's form (`messages_from_json` reads it)."""
        return messages_to_json(self.all_messages())

    def new_messages_json(self) -> bytes:
        """`new_messages()` as JSON, the stored history's form."""
        return messages_to_json(self._new)


def usage_of(output: TurnOutput) -> RunUsage:
    """The tokens, cost and tool calls the turn of `output` used."""
    metadata = output.metadata
    return RunUsage(
        input_tokens=metadata.tokens_in,
        output_tokens=metadata.tokens_out,
        cost=metadata.cost,
        tool_calls=len(metadata.tools_called),
    )
