from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from moneyed import Money

import layer0
from layer0 import Continue, Halt, HookContext, HookPoint, usd
from neuron_hooks import BudgetHook, HookConfigError, HookRegistry

POST = HookPoint.POST_INFERENCE


def _ctx(point: HookPoint = POST, **fields: Any) -> HookContext:
    base: dict[str, Any] = {"tokens_used": 0, "cost": usd("0"), "turns_completed": 0, "elapsed": 0}
    return HookContext(point=point, **(base | fields))


def test_budget_hook_is_a_layer0_hook() -> None:
    assert isinstance(BudgetHook(max_tokens=1), layer0.Hook)


def test_budget_hook_listens_at_post_inference_and_exit_check_only() -> None:
    assert BudgetHook(max_tokens=1).points == {HookPoint.POST_INFERENCE, HookPoint.EXIT_CHECK}


async def test_cost_over_budget_halts_with_both_figures_at_the_same_scale() -> None:
    hook = BudgetHook(max_cost="0.01")

    action = await hook.on_event(_ctx(cost=usd("0.0123")))

    assert action == Halt(reason="cost $0.0123 exceeds budget $0.0100")


@pytest.mark.parametrize("point", [HookPoint.POST_INFERENCE, HookPoint.EXIT_CHECK], ids=str)
async def test_budget_halts_at_each_of_its_points(point: HookPoint) -> None:
    action = await BudgetHook(max_cost="1").on_event(_ctx(point, cost=usd("1.5")))

    assert action == Halt(reason="cost $1.5 exceeds budget $1.0")


async def test_cost_exactly_at_budget_continues() -> None:
    assert await BudgetHook(max_cost="0.01").on_event(_ctx(cost=usd("0.0100"))) == Continue()


async def test_cost_is_compared_exactly_not_as_a_float() -> None:
    # As floats the two are equal; as decimals the cost is over.
    cost = usd("0.1000000000000000000000000001")
    assert float(cost.amount) == 0.1

    action = await BudgetHook(max_cost="0.1").on_event(_ctx(cost=cost))

    assert action == Halt(
        reason="cost $0.1000000000000000000000000001 exceeds budget $0.1000000000000000000000000000"
    )


async def test_tokens_over_budget_halt_with_both_figures() -> None:
    action = await BudgetHook(max_tokens=1000).on_event(_ctx(tokens_used=1001))

    assert action == Halt(reason="tokens used 1001 exceed budget 1000")


async def test_tokens_exactly_at_budget_continue() -> None:
    assert await BudgetHook(max_tokens=1000).on_event(_ctx(tokens_used=1000)) == Continue()


async def test_both_limits_passed_are_named_in_one_reason() -> None:
    hook = BudgetHook(max_cost="0.50", max_tokens=10)

    action = await hook.on_event(_ctx(cost=usd("0.75"), tokens_used=11))

    assert action == Halt(reason="cost $0.75 exceeds budget $0.50; tokens used 11 exceed budget 10")


async def test_only_the_limit_passed_is_named() -> None:
    hook = BudgetHook(max_cost="0.50", max_tokens=10)

    action = await hook.on_event(_ctx(cost=usd("0.10"), tokens_used=11))

    assert action == Halt(reason="tokens used 11 exceed budget 10")


@pytest.mark.parametrize(
    "max_cost", [usd("0.25"), Money("0.25", "USD"), Decimal("0.25"), "0.25", "0.250"], ids=repr
)
async def test_max_cost_accepts_money_decimal_and_string(max_cost: Any) -> None:
    hook = BudgetHook(max_cost=max_cost)

    assert hook.max_cost == Decimal("0.25")
    assert isinstance(await hook.on_event(_ctx(cost=usd("0.26"))), Halt)
    assert await hook.on_event(_ctx(cost=usd("0.25"))) == Continue()


async def test_over_budget_context_at_another_point_is_not_seen_through_the_registry() -> None:
    registry = HookRegistry()
    registry.add(BudgetHook(max_tokens=1))

    assert await registry.dispatch(_ctx(HookPoint.PRE_TOOL_USE, tokens_used=5)) == Continue()
    assert isinstance(await registry.dispatch(_ctx(tokens_used=5)), Halt)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs max_cost, max_tokens or both"),
        ({"max_cost": "-0.01"}, "must not be negative"),
        ({"max_cost": Money("1", "EUR")}, "costs are in USD"),
        ({"max_cost": 0.5}, "not JSON numbers"),
        ({"max_cost": "ten dollars"}, "decimal strings"),
        ({"max_tokens": -1}, "non-negative int"),
        ({"max_tokens": True}, "non-negative int"),
        ({"max_tokens": 10.0}, "non-negative int"),
    ],
    ids=repr,
)
def test_bad_limits_are_rejected(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(HookConfigError, match=message):
        BudgetHook(**kwargs)


_amounts = st.decimals(min_value=0, max_value=10**6, places=6, allow_nan=False)


@given(cost=_amounts, budget=_amounts)
async def test_halts_exactly_when_cost_exceeds_budget(cost: Decimal, budget: Decimal) -> None:
    action = await BudgetHook(max_cost=budget).on_event(_ctx(cost=usd(cost)))

    assert isinstance(action, Halt) == (cost > budget)
