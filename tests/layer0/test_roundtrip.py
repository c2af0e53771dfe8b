"""Property tests: dump → parse → dump is stable and parse(dump(x)) == x."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import layer0

from . import strategies as s

CASES = [
    ("TurnInput", s.turn_inputs),
    ("TurnOutput", s.turn_outputs),
    ("Effect", s.effects),
    ("HookAction", s.hook_actions),
    ("ExitReason", s.exit_reasons),
    ("Content", s.contents),
]


@pytest.mark.parametrize(("type_name", "strategy"), CASES, ids=[c[0] for c in CASES])
def test_dump_parse_dump_is_stable_and_parse_of_dump_equals_value(
    type_name: str, strategy: st.SearchStrategy[Any]
) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(layer0, type_name))

    @settings(max_examples=60, deadline=None)
    @given(strategy)
    def check(value: Any) -> None:
        wire = adapter.dump_json(value)
        parsed = adapter.validate_json(wire)
        assert parsed == value
        assert adapter.dump_json(parsed) == wire
        assert adapter.validate_python(adapter.dump_python(value, mode="json")) == value

    check()
