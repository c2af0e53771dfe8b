"""Hypothesis strategies for layer0 values."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import strategies as st
from moneyed import Money

import layer0

text = st.text(max_size=12)
ids = st.text(min_size=1, max_size=10)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)

MANTISSA_LIMIT = 2**96


def _usd(negative: bool, mantissa: int, scale: int) -> Money:
    return Money(Decimal(f"{'-' if negative and mantissa else ''}{mantissa}E-{scale}"), "USD")


# Costs the wire can carry: a mantissa below 2**96 and 0 to 28 places (see
# layer0.money); everyday amounts as well as the edges of that range.
costs = st.builds(
    _usd,
    st.booleans(),
    st.integers(0, 10**6) | st.integers(0, MANTISSA_LIMIT - 1),
    st.integers(0, 28),
)
u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)

image_sources = st.builds(layer0.Base64Source, data=text) | st.builds(layer0.UrlSource, url=text)
content_blocks = st.one_of(
    st.builds(layer0.TextBlock, text=text),
    st.builds(layer0.ImageBlock, source=image_sources, media_type=text),
    st.builds(layer0.ToolUseBlock, id=ids, name=ids, input=json_values),
    st.builds(layer0.ToolResultBlock, tool_use_id=ids, content=text, is_error=st.booleans()),
    st.builds(layer0.CustomBlock, content_type=text, data=json_values),
)
contents = st.builds(layer0.Content, text | st.lists(content_blocks, max_size=3))

triggers = st.sampled_from(["user", "task", "signal", "schedule", "system_event"]) | st.builds(
    layer0.CustomTrigger, name=text
)
turn_configs = st.builds(
    layer0.TurnConfig,
    max_turns=st.none() | u32,
    max_cost=st.none() | costs,
    max_duration=st.none() | u64,
    model=st.none() | text,
    allowed_tools=st.none() | st.lists(ids, max_size=3),
    system_addendum=st.none() | text,
)
turn_inputs = st.builds(
    layer0.TurnInput,
    message=contents,
    trigger=triggers,
    session=st.none() | ids,
    config=st.none() | turn_configs,
    metadata=json_values,
)
scopes = st.one_of(
    st.just("global"),
    st.builds(layer0.SessionScope, id=ids),
    st.builds(layer0.WorkflowScope, id=ids),
    st.builds(layer0.AgentScope, workflow=ids, agent=ids),
    st.builds(layer0.CustomScope, name=text),
)
effects = st.one_of(
    st.builds(layer0.WriteMemoryEffect, scope=scopes, key=text, value=json_values),
    st.builds(layer0.DeleteMemoryEffect, scope=scopes, key=text),
    st.builds(
        layer0.SignalEffect,
        target=ids,
        payload=st.builds(layer0.SignalPayload, signal_type=text, data=json_values),
    ),
    st.builds(layer0.DelegateEffect, agent=ids, input=turn_inputs),
    st.builds(layer0.HandoffEffect, agent=ids, state=json_values),
    st.builds(
        layer0.LogEffect,
        level=st.sampled_from(list(layer0.LogLevel)),
        message=text,
        data=json_values,
    ),
    st.builds(layer0.CustomEffect, effect_type=text, data=json_values),
)
hook_actions = st.one_of(
    st.builds(layer0.Continue),
    st.builds(layer0.Halt, reason=text),
    st.builds(layer0.SkipTool, reason=text),
    st.builds(layer0.ModifyToolInput, new_input=json_values),
)
exit_reasons = st.one_of(
    st.sampled_from(
        ["complete", "max_turns", "budget_exhausted", "circuit_breaker", "timeout", "error"]
    ),
    st.builds(layer0.ObserverHalt, reason=text),
    st.builds(layer0.CustomExit, name=text),
)
metadata = st.builds(
    layer0.TurnMetadata,
    tokens_in=u64,
    tokens_out=u64,
    cost=costs,
    turns_used=u32,
    tools_called=st.lists(
        st.builds(layer0.ToolCallRecord, name=ids, duration=u64, success=st.booleans()),
        max_size=3,
    ),
    duration=u64,
)
turn_outputs = st.builds(
    layer0.TurnOutput,
    message=contents,
    exit_reason=exit_reasons,
    metadata=metadata,
    effects=st.lists(effects, max_size=3),
)
