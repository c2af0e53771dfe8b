"""`calculator`: arithmetic read with `ast` and computed node by node, never with `eval`.

Only numbers, `+ - * / // % **`, unary `-` and `+`, and parentheses are
accepted. Limits keep one call cheap whatever the model writes: the
expression's length, the exponent's size, and the size of every integer
along the way.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Final, TypeAlias

from neuron_tool import ToolAnnotations, tool

__all__ = [
    "MAX_EXPONENT",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INTEGER_BITS",
    "CalculatorError",
    "calculator",
    "evaluate",
]

Number: TypeAlias = int | float

MAX_EXPRESSION_LENGTH: Final = 500
"""The longest expression accepted, in characters."""
MAX_EXPONENT: Final = 1000
"""The largest exponent (in absolute value) `**` accepts."""
MAX_INTEGER_BITS: Final = 10_000
"""The largest integer any step may produce, in bits (about 3000 decimal digits)."""

_BINARY: Final[dict[type[ast.operator], Callable[[Number, Number], Number]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: Final[dict[type[ast.unaryop], Callable[[Number], Number]]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
# Operators Python parses but arithmetic does not have, with a hint for the model.
_REFUSED: Final[dict[type[ast.AST], str]] = {
    ast.BitXor: "'^' is not supported; write powers with **, e.g. 2**10",
    ast.BitAnd: "'&' is not supported",
    ast.BitOr: "'|' is not supported",
    ast.LShift: "'<<' is not supported",
    ast.RShift: "'>>' is not supported",
    ast.MatMult: "'@' is not supported",
    ast.Invert: "'~' is not supported",
    ast.Not: "'not' is not supported",
}


class CalculatorError(ValueError):
    """The expression is not arithmetic the calculator accepts, or has no finite value."""


def evaluate(expression: str) -> Number:
    """Compute `expression` and return an `int` (exact) or a `float`.

    Raises:
        CalculatorError: the expression is empty, too long, not arithmetic
            (names, calls, attributes, strings…), divides by zero, or its
            value is too large or not a real number.
    """
    text = expression.strip()
    if not text:
        raise CalculatorError("the expression is empty")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculatorError(
            f"the expression is {len(text)} characters long; at most {MAX_EXPRESSION_LENGTH}"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"{text!r} is not an arithmetic expression ({exc.msg})") from None
    except UnicodeEncodeError:  # a lone surrogate, which JSON arguments may escape (\ud800)
        raise CalculatorError(
            f"{text!r} is not an arithmetic expression (it holds a lone surrogate)"
        ) from None
    return _value(tree.body)


def _value(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.BinOp):
        return _binary(node.op, _value(node.left), _value(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    raise CalculatorError(_refusal(node))


def _constant(value: object) -> Number:
    # bool is an int subclass, but True + 1 is not arithmetic anyone means.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculatorError(f"only numbers are allowed, not {value!r}")
    return _checked(value)


def _binary(op: ast.operator, left: Number, right: Number) -> Number:
    if isinstance(op, ast.Pow):
        return _power(left, right)
    function = _BINARY.get(type(op))
    if function is None:
        raise CalculatorError(_REFUSED.get(type(op), f"{type(op).__name__} is not supported"))
    try:
        return _checked(function(left, right))
    except ZeroDivisionError:
        raise CalculatorError("division by zero: the expression has no value") from None
    except OverflowError:
        raise CalculatorError("the result is too large") from None


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        shown = _short(exponent)
        raise CalculatorError(f"the exponent {shown} is too large; at most {MAX_EXPONENT}")
    # bits(base) * exponent is at most twice the result's size: refuse what is surely
    # too large before computing it; `_checked` catches the rest afterwards.
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if max(base.bit_length(), 1) * exponent > 2 * MAX_INTEGER_BITS:
            raise CalculatorError("the result is too large")
    try:
        result: object = base**exponent
    except ZeroDivisionError:
        raise CalculatorError("division by zero: 0 to a negative power has no value") from None
    except OverflowError:
        raise CalculatorError("the result is too large") from None
    if isinstance(result, complex):
        raise CalculatorError(
            "the result is not a real number (a negative number to a fractional power)"
        )
    assert isinstance(result, int | float)
    return _checked(result)


def _checked(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INTEGER_BITS:
        raise CalculatorError("the result is too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("the result is too large to represent")
    return value


def _short(value: Number) -> str:
    text = str(value)
    return text if len(text) <= 20 else f"{text[:12]}…({len(text)} digits)"


def _refusal(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return f"names are not allowed ({node.id!r}); write the numbers themselves"
    if isinstance(node, ast.Call):
        return "function calls are not allowed; use only + - * / // % ** and parentheses"
    if isinstance(node, ast.Attribute):
        return f"attributes are not allowed ({node.attr!r})"
    if isinstance(node, ast.UnaryOp):
        return _REFUSED.get(type(node.op), f"{type(node.op).__name__} is not supported")
    return f"{type(node).__name__} is not arithmetic; use only numbers and + - * / // % **"


@tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
def calculator(expression: str) -> Number:
    """Compute an arithmetic expression exactly: numbers, + - * / // % ** and parentheses.

    Args:
        expression: The expression to compute, written with numbers and those operators.
    """
    return evaluate(expression)
