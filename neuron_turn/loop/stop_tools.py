"""Stop tools: a call that succeeds ends the turn with its result, as the OpenAI SDK's StopAtTools.

`NeuronTurnConfig.stop_at_tools` and an input's own
(`TurnInput.metadata["neuron_turn"]["stop_at_tools"]`, beside the config's)
name them. After a round of calls, the first call in the model's order to a
stop tool whose result is not an error ends the turn `complete` with that
result as its final answer, and no model call after it; a call that failed,
was skipped by a hook, refused or denied ends nothing. The answer is then
the output type's value for a typed turn (the result must validate), and
passes the output validators and guardrails as any final answer does. A
name the turn has no tool for is refused (`UnknownStopToolError`): a
config's when the turn is made, an input's before any model call. A turn
with a tool source asked at every step (`per_step`) is the exception: such a
source may give the tool at a later step (one the run's own calls turn on),
so a name no tool holds yet is watched rather than refused, and a run that
never offered it says so at its end (a WARN `log` effect naming it), so a
misspelt name is still never silent.

Why: a tool whose result is the answer (a lookup, a ticket filed) needs no
model call to repeat it, which costs time and money and may garble it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from layer0 import LogEffect, LogLevel, NonRetryableError
from neuron_tool import ToolRegistry

from ._output_round import CALL_OPTIONS_KEY
from ._tool_input import UNRUN
from .effect_tools import EFFECT_TOOL_NAMES
from .memory_tools import MEMORY_TOOL_NAMES
from .provider import ProviderMessage, ToolResultPart, ToolUsePart

__all__ = [
    "INPUT_STOP_TOOLS",
    "UnknownStopToolError",
    "check_stop_tools",
    "stop_result",
    "unoffered_stop_tools",
]

INPUT_STOP_TOOLS: Final = f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}]['stop_at_tools']"
"""Where an input's own stop tools are given, as errors name it."""


class UnknownStopToolError(NonRetryableError, ValueError):
    """A stop tool the turn does not have: misspelt, it would never stop the turn."""


def check_stop_tools(names: Collection[str], tools: ToolRegistry, *, where: str) -> frozenset[str]:
    """Refuse stop tools `names` (given in `where`) that a turn with `tools` does not have.

    With per-step sources (`tools.step_sources`), which may give them later, they are
    returned instead, for the run to watch for (see the module doc).

    Raises:
        UnknownStopToolError: naming them and the tools there are.
    """
    unknown = sorted(set(names) - {*tools.names(), *EFFECT_TOOL_NAMES, *MEMORY_TOOL_NAMES})
    if not unknown:
        return frozenset()
    if tools.step_sources:
        return frozenset(unknown)
    raise UnknownStopToolError(
        f"{where} names stop tools this turn does not have: {', '.join(unknown)}; "
        f"its tools: {', '.join(tools.names()) or 'none'}, and the effect and memory tools"
    )


def unoffered_stop_tools(names: Collection[str]) -> LogEffect:
    """The warning of a run whose per-step sources never offered stop tools `names`."""
    listed = ", ".join(sorted(names))
    return LogEffect(
        level=LogLevel.WARN,
        message=(
            f"stop tools never offered in this run: {listed}; no step's tools held them, so "
            "no call to them could end the turn (misspelt, or a tool source that did not "
            "give them)"
        ),
        data={"stop_at_tools": sorted(names)},
    )


def stop_result(
    results: ProviderMessage, calls: Sequence[ToolUsePart], stops: Collection[str]
) -> tuple[str, str] | None:
    """(name, result) of the first call of `calls` to a stop tool that succeeded, if any.

    `results` is the round's result message; a call skipped, refused, denied or
    failed has an error result, and ends nothing.
    """
    for call in calls:
        if call.name not in stops or isinstance(call, UNRUN):
            continue
        for part in results.content:
            if isinstance(part, ToolResultPart) and part.tool_use_id == call.id:
                if not part.is_error:
                    return call.name, part.content
                break
    return None
