"""The calculator: arithmetic from `ast`, never `eval`, with limits and clear refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_tool import ToolCallError, ToolInputError, ToolRegistry
from neuron_tools_basic import (
    MAX_EXPONENT,
    MAX_EXPRESSION_LENGTH,
    CalculatorError,
    calculator,
    evaluate,
)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("17*23", 391),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("2 * 3 ** 2", 18),
        ("2 ** 3 ** 2", 512),  # ** is right-associative
        ("10 - 4 - 3", 3),  # - is left-associative
        ("100 / 10 / 5", 2.0),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("1 / 4", 0.25),
        ("2 ** 0.5", 2**0.5),
        ("2 ** -1", 0.5),
        ("1_000 + 1e3", 2000.0),
        ("((((42))))", 42),
        ("  3 + 4  ", 7),
    ],
)
def test_precedence_associativity_and_number_forms(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "value"),
    [("-5", -5), ("--5", 5), ("+5", 5), ("-3 ** 2", -9), ("(-3) ** 2", 9), ("2 * -3", -6)],
)
def test_unary_minus_and_plus(expression: str, value: int) -> None:
    assert evaluate(expression) == value


def test_integers_stay_exact() -> None:
    assert evaluate("2 ** 100") == 2**100
    assert isinstance(evaluate("6 / 3"), float)
    assert isinstance(evaluate("6 // 3"), int)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("x + 1", "names are not allowed ('x')"),
        ("pi * 2", "names are not allowed ('pi')"),
        ("abs(-1)", "function calls are not allowed"),
        ("__import__('os').system('true')", "function calls are not allowed"),
        ("(1).real", "attributes are not allowed ('real')"),
        ("'a' * 3", "only numbers are allowed, not 'a'"),
        ("True + 1", "only numbers are allowed, not True"),
        ("1j * 2", "only numbers are allowed, not 1j"),
        ("[1, 2][0]", "Subscript is not arithmetic"),
        ("1 < 2", "Compare is not arithmetic"),
        ("lambda: 1", "Lambda is not arithmetic"),
        ("2 ^ 10", "'^' is not supported; write powers with **"),
        ("6 & 3", "'&' is not supported"),
        ("~1", "'~' is not supported"),
        ("not 1", "'not' is not supported"),
    ],
)
def test_anything_but_arithmetic_is_refused_with_a_reason(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError) as caught:
        evaluate(expression)
    assert message in str(caught.value)


@pytest.mark.parametrize("expression", ["1 / 0", "1 // 0", "1 % 0", "5 / (3 - 3)"])
def test_division_by_zero_says_so(expression: str) -> None:
    with pytest.raises(CalculatorError, match=r"^division by zero: the expression has no value$"):
        evaluate(expression)


def test_zero_to_a_negative_power_is_a_division_by_zero() -> None:
    with pytest.raises(CalculatorError, match="division by zero"):
        evaluate("0 ** -1")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("2 ** 1001", f"the exponent 1001 is too large; at most {MAX_EXPONENT}"),
        ("2 ** -1001", "the exponent -1001 is too large"),
        ("9 ** 9 ** 9", "the exponent 387420489 is too large"),
        ("2 ** 10 ** 400", "the exponent 100000000000…(401 digits) is too large"),
        ("(10 ** 100) ** 100", "the result is too large"),
        ("(2 ** 1000) ** 11", "the result is too large"),
        ("(2 ** 1000) * (2 ** 1000) ** 9", "the result is too large"),
        ("10.0 ** 400", "the result is too large"),
        ("1e308 * 10", "the result is too large to represent"),
        ("1e999", "the result is too large to represent"),
    ],
)
def test_huge_exponents_and_results_are_refused(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError) as caught:
        evaluate(expression)
    assert message in str(caught.value)


def test_large_but_bounded_integers_are_computed() -> None:
    assert evaluate("10 ** 1000") == 10**1000
    assert evaluate("2 ** 1000 * 2 ** 1000") == 2**2000


def test_a_negative_number_to_a_fractional_power_is_not_real() -> None:
    with pytest.raises(CalculatorError, match="not a real number"):
        evaluate("(-8) ** 0.5")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "the expression is empty"),
        ("   ", "the expression is empty"),
        ("1 +", "'1 +' is not an arithmetic expression (invalid syntax)"),
        ("15% of 240", "is not an arithmetic expression"),
        ("1" * (MAX_EXPRESSION_LENGTH + 1), f"at most {MAX_EXPRESSION_LENGTH}"),
    ],
)
def test_empty_broken_or_too_long_expressions(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError) as caught:
        evaluate(expression)
    assert message in str(caught.value)


def test_the_longest_accepted_expression_is_computed() -> None:
    expression = "+".join(["1"] * (MAX_EXPRESSION_LENGTH // 2))
    assert len(expression) <= MAX_EXPRESSION_LENGTH
    assert evaluate(expression) == MAX_EXPRESSION_LENGTH // 2


def test_calculator_error_is_a_value_error() -> None:
    assert issubclass(CalculatorError, ValueError)


_INTS = st.integers(min_value=-1000, max_value=1000).map(str)
_EXPRESSIONS = st.recursive(
    _INTS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        inner.map(lambda e: f"-{e}"),
    ),
    max_leaves=12,
)


@given(_EXPRESSIONS)
def test_agrees_with_python_on_integer_arithmetic(expression: str) -> None:
    # eval only here, on expressions the test itself generated, as the reference.
    assert evaluate(expression) == eval(expression)


async def test_the_tool_computes_through_the_registry() -> None:
    registry = ToolRegistry([calculator])
    assert await registry.call("calculator", {"expression": "17*23"}) == 391
    assert await registry.call("calculator", {"expression": "1/4"}) == 0.25


async def test_the_tool_reports_a_refusal_as_a_failed_call() -> None:
    registry = ToolRegistry([calculator])
    with pytest.raises(ToolCallError, match="division by zero") as caught:
        await registry.call("calculator", {"expression": "1/0"})
    assert isinstance(caught.value.__cause__, CalculatorError)


async def test_the_registry_validates_arguments() -> None:
    registry = ToolRegistry([calculator])
    with pytest.raises(ToolInputError):
        await registry.call("calculator", {"expression": "1", "type": "object"})
    with pytest.raises(ToolInputError):
        await registry.call("calculator", {})


def test_the_tool_schema_asks_for_one_expression_string() -> None:
    assert calculator.name == "calculator"
    assert calculator.input_schema["required"] == ["expression"]
    properties = calculator.input_schema["properties"]
    assert isinstance(properties, dict)
    assert list(properties) == ["expression"]
    assert "+ - * / // % **" in calculator.description
    assert calculator.annotations is not None and calculator.annotations.read_only_hint
