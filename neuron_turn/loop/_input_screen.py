"""The input guardrails of one turn, run beside its first model call (see `guardrails`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from layer0 import Content
from neuron_tool import RunContext

from ._run import RunState
from .events import TurnEvent
from .guardrails import InputGuardrail, Tripped, first_trip
from .provider import ProviderResponse


class InputScreen:
    """The input guardrails' checks of one message, started as the screen is made."""

    def __init__(
        self, guardrails: Sequence[InputGuardrail], context: RunContext[Any], message: Content
    ) -> None:
        checks = [(guardrail.name, guardrail.check(context, message)) for guardrail in guardrails]
        self._verdict = asyncio.ensure_future(first_trip(checks, "input"))

    async def screened(
        self, call: Coroutine[Any, Any, ProviderResponse], run: RunState
    ) -> tuple[ProviderResponse | None, Tripped | None]:
        """Run `call` beside the checks: its response (None: cancelled), and the trip if any.

        `run`'s events are held until every check passed, then passed on as they come.

        Raises:
            TurnError: as `call` or a check raised it.
            GuardrailError: a check raised anything else.
        """
        held = None if run.sink is None else _Held(run.sink)
        if held is not None:
            run.sink = held
        answer = asyncio.ensure_future(call)
        verdict = self._verdict
        try:
            await asyncio.wait({answer, verdict}, return_when=asyncio.FIRST_COMPLETED)
            if verdict.done():
                tripped = verdict.result()
                if tripped is not None:
                    return None, tripped  # the answer is not waited for
                if held is not None:
                    held.release()  # passed: the rest of the answer streams as it comes
                return await answer, None
            response = await answer
            tripped = await verdict
            if tripped is None and held is not None:
                held.release()
            return response, tripped
        finally:
            if held is not None:
                run.sink = held.sink
            for task in (answer, verdict):
                task.cancel()
            await asyncio.gather(answer, verdict, return_exceptions=True)


class _Held:
    """A sink that keeps events until released, then passes them on, and the later ones."""

    def __init__(self, sink: Callable[[TurnEvent], None]) -> None:
        self.sink = sink
        self._events: list[TurnEvent] | None = []

    def __call__(self, event: TurnEvent) -> None:
        if self._events is None:
            self.sink(event)
        else:
            self._events.append(event)

    def release(self) -> None:
        events, self._events = self._events or [], None
        for event in events:
            self.sink(event)
