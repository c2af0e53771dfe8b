"""`RunUsage`: what a turn has used so far, a frozen snapshot."""

from __future__ import annotations

import dataclasses

import pytest

from layer0 import usd
from neuron_tool import RunUsage


def test_usage_starts_at_nothing_and_adds_its_tokens_up() -> None:
    assert RunUsage().total_tokens == 0 and RunUsage().cost == usd()
    used = RunUsage(input_tokens=120, output_tokens=30, cost=usd("0.25"), tool_calls=2)
    assert used.total_tokens == 150


def test_a_tool_cannot_change_the_usage_it_is_shown() -> None:
    used = RunUsage(input_tokens=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        used.input_tokens = 0  # type: ignore[misc]
