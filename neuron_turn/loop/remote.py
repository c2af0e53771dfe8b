"""A dispatch as a server shows it to remote clients (A2A, AG-UI, the Vercel AI SDK).

Each such server follows one dispatch as it runs (`follow_dispatch`: the events
of its own workflow, then its output; `relay`: the same, made into its
protocol's messages by a `Translator`) and tells its client the answer
(`answer_text`, `answer_images`, `typed_result`) or why there is none (`stopped_reason`), in
its protocol's words. Why here: every server says the same things, and says
them alike.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Final, Protocol, TypeVar

from pydantic import JsonValue

from layer0 import (
    AgentId,
    CustomExit,
    ImageBlock,
    ObserverHalt,
    Orchestrator,
    TextBlock,
    TurnInput,
    TurnOutput,
)
from neuron_tool.serving import error_text

from .output import OutputMissingError, output_value
from .stream import DispatchStream, dispatch_streamer

__all__ = [
    "FollowedDispatch",
    "Translator",
    "answer_images",
    "answer_text",
    "follow_dispatch",
    "relay",
    "stopped_reason",
    "typed_result",
]

_log = logging.getLogger(__name__)
_M = TypeVar("_M", covariant=True)

_SAID_CHARS: Final = 2000
"""The most of a stopped turn's own words `stopped_reason` repeats."""


class FollowedDispatch:
    """One dispatch followed as it runs: the events of its own workflow, then its output.

    Use as `async with follow_dispatch(...) as followed: async for event in
    followed: ...`, then read `followed.output`. Leaving the `async with` early
    (a client gone) stops the dispatch. Delegations run in workflows of their
    own: their events are theirs, not this dispatch's, and are left out.
    """

    def __init__(
        self, orchestrator: Orchestrator, agent: AgentId, input: TurnInput, stream: bool
    ) -> None:
        """Follow the dispatch of `input` to `agent`; streamed when `stream` and it can be."""
        self._orchestrator = orchestrator
        self._agent = agent
        self._input = input
        self._streamer = dispatch_streamer(orchestrator) if stream else None
        self._stream: DispatchStream | None = None
        self._output: TurnOutput | None = None

    async def __aenter__(self) -> FollowedDispatch:
        """Start the dispatch (a streamed one; a plain one starts when iterated)."""
        if self._streamer is not None:
            stream = self._streamer(self._agent, self._input)
            await stream.__aenter__()
            self._stream = stream
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the dispatch if it still runs."""
        if self._stream is not None:
            await self._stream.__aexit__(exc_type, exc, traceback)

    async def __aiter__(self) -> AsyncIterator[object]:
        """The dispatch's own events as they come (none when it is not streamed)."""
        if self._stream is None:
            self._output = await self._orchestrator.dispatch(self._agent, self._input)
            return
        root: str | None = None
        async for item in self._stream:
            root = item.workflow_id if root is None else root
            if item.workflow_id == root:
                yield item.event
        self._output = self._stream.result.output

    @property
    def output(self) -> TurnOutput:
        """The dispatch's output, once its events were read to their end.

        Raises:
            RuntimeError: the events were not read to their end.
        """
        if self._output is None:
            raise RuntimeError("the dispatch's output is known once its events are all read")
        return self._output


def follow_dispatch(
    orchestrator: Orchestrator, agent: AgentId, input: TurnInput, *, stream: bool = True
) -> FollowedDispatch:
    """Follow the dispatch of `input` to `agent` of `orchestrator` (see `FollowedDispatch`).

    `stream`: show its events as they happen when the orchestrator can (a
    `stream(agent, input)` method, as `LocalOrchestrator` and
    `TemporalOrchestrator` have); otherwise only its output, at the end.
    """
    return FollowedDispatch(orchestrator, agent, input, stream)


class Translator(Protocol[_M]):
    """What makes a dispatch into a protocol's messages (AG-UI events, AI SDK chunks)."""

    def on(self, event: object) -> Sequence[_M]:
        """The messages of one of the dispatch's events (none for most)."""
        ...

    def failed(self, exc: BaseException) -> Sequence[_M]:
        """The last messages when the dispatch raised `exc` (saying why, never a traceback)."""
        ...

    def finished(self, output: TurnOutput) -> Sequence[_M]:
        """The last messages, for the dispatch's `output`."""
        ...


async def relay(
    orchestrator: Orchestrator,
    agent: AgentId,
    input: TurnInput,
    translator: Translator[_M],
    *,
    stream: bool = True,
) -> AsyncIterator[_M]:
    """The messages `translator` makes of the dispatch of `input` to `agent`, as it runs.

    Its events (see `follow_dispatch`), then its end: `finished` with the
    output, or `failed` with what the dispatch raised (logged here as a
    warning, the error's kind and message only).
    """
    try:
        followed = follow_dispatch(orchestrator, agent, input, stream=stream)
        async with followed:
            async for event in followed:
                for message in translator.on(event):
                    yield message
        output = followed.output
    except Exception as exc:
        _log.warning(
            "dispatch to %s of session %s failed: %s", agent, input.session, error_text(exc)
        )
        for message in translator.failed(exc):
            yield message
        return
    for message in translator.finished(output):
        yield message


def answer_text(output: TurnOutput) -> str:
    """The answer's text: all of the output's text blocks, joined."""
    root = output.message.root
    if isinstance(root, str):
        return root
    return "".join(block.text for block in root if isinstance(block, TextBlock))


def answer_images(output: TurnOutput) -> list[ImageBlock]:
    """The images of the answer (a model's, `ImageGeneration`), in order; none for text."""
    root = output.message.root
    if isinstance(root, str):
        return []
    return [block for block in root if isinstance(block, ImageBlock)]


def typed_result(output: TurnOutput) -> JsonValue:
    """The turn's typed result, when its agent has an output type (None: it has none)."""
    try:
        return output_value(output)
    except OutputMissingError:
        return None


def stopped_reason(output: TurnOutput, why: str | None = None) -> tuple[str, str]:
    """The kind and the words of a turn that ended without a complete answer.

    The kind is the exit reason's name (`observer_halt` for a hook's halt);
    the words say why (`why`, or the reason: a hook's, or the limit reached)
    and repeat the start of what the turn said, if anything.
    """
    reason = output.exit_reason
    if isinstance(reason, ObserverHalt):
        kind, cause = "observer_halt", f"a hook stopped the turn: {reason.reason}"
    else:
        kind = reason.name if isinstance(reason, CustomExit) else str(reason)
        cause = f"it ended with {kind}"
    text = answer_text(output).strip()
    said = f": {text[:_SAID_CHARS]}" if text else ""
    return kind, f"the turn stopped before a complete answer ({why or cause}){said}"
