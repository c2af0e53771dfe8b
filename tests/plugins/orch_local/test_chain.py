from __future__ import annotations

import pytest
from pydantic import ValidationError

from layer0 import (
    DelegateEffect,
    DispatchFailed,
    HandoffEffect,
    LogEffect,
    LogLevel,
    TurnInput,
)
from neuron_orch_local import Chain

TASK = TurnInput(message="go", trigger="task")


def test_delegation_and_handoff_extend_the_route_and_depth() -> None:
    chain = Chain.root("a", max_depth=3).delegate("b").handoff("c")
    assert chain.route() == "a -> b -> c (handoff)"
    assert chain.waiting == ("a", "c")
    assert chain.depth == 2


def test_a_handoff_back_is_no_cycle_but_a_delegation_back_is() -> None:
    chain = Chain.root("a", max_depth=5)
    assert chain.handoff("b").handoff("a").waiting == ("a",)
    with pytest.raises(DispatchFailed, match=r"delegation cycle: a -> b -> a"):
        chain.delegate("b").delegate("a")


def test_depth_past_max_depth_fails_naming_the_route() -> None:
    with pytest.raises(DispatchFailed, match=r"too deep: 'b' would be at depth 1, max_depth is 0"):
        Chain.root("a", max_depth=0).handoff("b")


def test_follow_gives_the_chain_of_each_delegation_and_handoff_by_index() -> None:
    effects = [
        LogEffect(level=LogLevel.INFO, message="hi"),
        DelegateEffect(agent="b", input=TASK),
        HandoffEffect(agent="c", state=None),
    ]
    chain = Chain.root("a", max_depth=2)
    assert chain.follow(effects) == {1: chain.delegate("b"), 2: chain.handoff("c")}


def test_follow_fails_on_the_first_effect_that_breaks_a_limit() -> None:
    effects = [DelegateEffect(agent="b", input=TASK), DelegateEffect(agent="a", input=TASK)]
    with pytest.raises(DispatchFailed, match="delegation cycle: a -> a"):
        Chain.root("a", max_depth=2).follow(effects)


def test_a_chain_is_frozen_and_round_trips_as_json() -> None:
    chain = Chain.root("a", max_depth=4).delegate("b")
    with pytest.raises(ValidationError):
        chain.depth = 0  # type: ignore[misc]
    wire = chain.model_dump(mode="json")
    assert wire == {"steps": ["a", "b"], "waiting": ["a", "b"], "depth": 1, "max_depth": 4}
    assert Chain.model_validate(wire) == chain
