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
config's when the turn is made, an input's before any model call.

Why: a tool whose result is the answer (a lookup, a ticket filed) needs no
model call to repeat it, which costs time and money and may garble it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from layer0 import NonRetryableError
from neuron_tool import ToolRegistry

from ._output_round import CALL_OPTIONS_KEY
from ._tool_input import UNRUN
from .effect_tools import EFFECT_TOOL_NAMES
from .memory_tools import MEMORY_TOOL_NAMES
from .provider import ProviderMessage, ToolResultPart, ToolUsePart

__all__ = ["INPUT_STOP_TOOLS", "UnknownStopToolError", "check_stop_tools", "stop_result"]

INPUT_STOP_TOOLS: Final = f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}]['stop_at_tools']"
"""Where an input's own stop tools are given, as errors name it."""


class UnknownStopToolError(NonRetryableError, ValueError):
    """A stop tool the turn does not have: misspelt, it would never stop the turn."""


def check_stop_tools(names: Collection[str], tools: ToolRegistry, *, where: str) -> None:
    """Refuse stop tools `names` (given in `where`) that a turn with `tools` does not have.

    Raises:
        UnknownStopToolError: naming them and the tools there are.
    """
    unknown = sorted(set(names) - {*tools.names(), *EFFECT_TOOL_NAMES, *MEMORY_TOOL_NAMES})
    if unknown:
        raise UnknownStopToolError(
            f"{where} names stop tools this turn does not have: {', '.join(unknown)}; "
            f"its tools: {', '.join(tools.names()) or 'none'}, and the effect and memory tools"
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
