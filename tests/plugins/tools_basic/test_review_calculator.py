"""The calculator given text no arithmetic parser can read: a clear refusal, never a crash."""

from __future__ import annotations

import json

import pytest

from neuron_tool import ToolCallError, ToolRegistry
from neuron_tools_basic import CalculatorError, calculator, evaluate


@pytest.mark.parametrize("expression", ["\ud800", "1 + \udcff", "2 * 3\udfff"])
def test_a_lone_surrogate_is_not_an_arithmetic_expression(expression: str) -> None:
    with pytest.raises(CalculatorError, match="holds a lone surrogate"):
        evaluate(expression)


async def test_a_model_escaping_a_surrogate_in_its_arguments_gets_a_failed_call() -> None:
    arguments = json.loads('{"expression": "1 + \\ud800"}')  # as a provider decodes them
    with pytest.raises(ToolCallError, match="not an arithmetic expression"):
        await ToolRegistry([calculator]).call("calculator", arguments)
