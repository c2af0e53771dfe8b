"""An input's own options, kept across an approval pause so its resume answers as it would have.

An input may carry options of its own in its metadata: an output schema, usage
limits, model settings, stop tools, external tools (`TurnInput.metadata["neuron_turn"]`).
A resume
(`resume_input`) is built later, often in another process, from the session and
the decisions alone, and does not know them: before, the resumed part answered
untyped, with no usage limits and no stop tools. So a turn that pauses for
approval keeps them in its session, under `PAUSED_OPTIONS_KEY` beside the
history it appends, naming the calls that wait; a resume takes them from there:
the usage limits as what the first part left of them. A tool choice is not
kept: the paused part already called a tool, so a choice that forced one is
spent. A resume's own options win key by key (`run(decisions=...,
usage_limits=...)` keeps the paused output type), an output it asks for in
place of the kept one whole, its model settings setting by setting; a record
kept for other calls (an older pause) is not used. No tool may read or change the
key (`_loop_keys`), so a model cannot lift its own limits.

    {"pending": ["toolu_01"], "options": {"output_schema": {...}, "output_name": "Answer",
                                          "usage_limits": {"tool_calls": 3}}}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from layer0 import (
    NonRetryableError,
    SessionId,
    SessionScope,
    StateReader,
    TurnInput,
    WriteMemoryEffect,
)

from ._output_round import CALL_OPTIONS_KEY
from ._stored_history import read_kept
from .limits import UsageLimits
from .provider import ToolUsePart

__all__ = ["PAUSED_OPTIONS_KEY", "paused_options_effect", "with_paused_options"]

PAUSED_OPTIONS_KEY: Final = "neuron_turn/paused_options"
"""The session-scope key of the options a turn paused for approval keeps for its resume."""

_KEPT: Final = (
    "output_schema",
    "output_type",
    "output_name",
    "output_mode",
    "output_strict",
    "output_text",
    "usage_limits",
    "model_settings",
    "stop_at_tools",
    "external_tools",
)


def paused_options_effect(
    session: SessionId,
    metadata: JsonValue,
    usage_left: UsageLimits | None,
    pending: Sequence[ToolUsePart],
) -> WriteMemoryEffect | None:
    """The effect keeping an input's options for the resume of its pause (None: it has none).

    `usage_left` is what the paused part left of the usage limits; `pending`, the
    calls the pause waits on.
    """
    options = metadata.get(CALL_OPTIONS_KEY) if isinstance(metadata, dict) else None
    kept: dict[str, JsonValue] = (
        {key: options[key] for key in _KEPT if options.get(key) is not None}
        if isinstance(options, dict)
        else {}
    )
    if usage_left is not None:
        kept["usage_limits"] = usage_left.to_json()
    if not kept:
        return None
    value: JsonValue = {"pending": [call.id for call in pending], "options": kept}
    return WriteMemoryEffect(scope=SessionScope(id=session), key=PAUSED_OPTIONS_KEY, value=value)


async def with_paused_options(
    input: TurnInput, state: StateReader, pending: Sequence[ToolUsePart]
) -> TurnInput:
    """`input` (a resume of the pause on `pending`) with the options that pause kept, if any.

    Raises:
        NonRetryableError: what the session keeps under the key is not such a record.
        RetryableError: the store failed.
    """
    assert input.session is not None
    kept = await read_kept(state, input.session, PAUSED_OPTIONS_KEY, "the options of a pause")
    if kept is None:
        return input
    where = f"the options kept for the pause of session {input.session!r}"
    if not (
        isinstance(kept, dict)
        and isinstance(kept.get("pending"), list)
        and isinstance(kept.get("options"), dict)
    ):
        raise NonRetryableError(f"{where} must be an object of 'pending' calls and 'options'")
    if kept["pending"] != [call.id for call in pending]:
        return input  # kept by an earlier pause, for other calls
    metadata = input.metadata if isinstance(input.metadata, dict) else {}
    own, carried = metadata.get(CALL_OPTIONS_KEY), kept["options"]
    assert isinstance(carried, dict)  # checked above
    if not isinstance(own, dict):
        options = carried
    elif any(own.get(key) is not None for key in _OUTPUT):
        # An output asked for anew replaces the kept one whole, never half of each.
        options = {**{k: v for k, v in carried.items() if k not in _OUTPUT}, **own}
    else:
        options = {**carried, **own}
    if isinstance(own, dict) and "model_settings" in own and "model_settings" in carried:
        options["model_settings"] = _laid_over(own["model_settings"], carried["model_settings"])
    return input.model_copy(update={"metadata": {**metadata, CALL_OPTIONS_KEY: options}})


def _laid_over(own: JsonValue, kept: JsonValue) -> JsonValue:
    """A resume's own model settings over its pause's, setting by setting (sampling too).

    As `ModelSettings.over` lays a run's over a turn's: what the resume leaves unset
    (absent or null) is the pause's. What is no object is left for the options' reader
    to refuse.
    """
    if not isinstance(own, dict) or not isinstance(kept, dict):
        return own
    merged = {**kept, **{key: value for key, value in own.items() if value is not None}}
    own_sampling, kept_sampling = own.get("sampling"), kept.get("sampling")
    if isinstance(own_sampling, dict) and isinstance(kept_sampling, dict):
        set_here = {key: value for key, value in own_sampling.items() if value is not None}
        merged["sampling"] = {**kept_sampling, **set_here}
    return merged


_OUTPUT: Final = frozenset(key for key in _KEPT if key.startswith("output_"))
"""The kept options that together say what the answer is."""
