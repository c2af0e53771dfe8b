from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from neuron_tool import FunctionTool, ToolAnnotations, ToolDyn, ToolRegistrationError, tool


class Opaque:
    """A plain class pydantic has no schema for."""


class Item(BaseModel):
    name: str
    qty: int = 1


def place_order(items: list[Item], rush: bool = False) -> dict[str, int]:
    """Place an order for the given items.

    Orders ship the same day when `rush` is set.

    Args:
        items: What to order.
        rush: Ship today,
            at extra cost.

    Returns:
        The order id.
    """
    return {"id": len(items)}


def test_bare_decorator_makes_a_function_tool_named_after_the_function() -> None:
    made = tool(place_order)
    assert isinstance(made, FunctionTool)
    assert made.name == "place_order"
    assert made.function is place_order


def test_decorator_with_options_overrides_name_description_and_annotations() -> None:
    hints = ToolAnnotations(read_only_hint=False, destructive_hint=True)
    made = tool(name="order", description="Order things.", annotations=hints)(place_order)
    assert (made.name, made.description, made.annotations) == ("order", "Order things.", hints)


def test_decorator_with_empty_parentheses_works_like_bare() -> None:
    @tool()
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    assert (ping.name, ping.description) == ("ping", "Answer pong.")


def test_description_is_the_docstring_without_args_and_returns() -> None:
    assert tool(place_order).description == (
        "Place an order for the given items.\n\nOrders ship the same day when `rush` is set."
    )


def test_input_schema_comes_from_the_signature_with_docstring_descriptions() -> None:
    schema = tool(place_order).input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["items"]
    assert schema["additionalProperties"] is False
    assert schema["properties"] == {
        "items": {
            "description": "What to order.",
            "items": {"$ref": "#/$defs/Item"},
            "type": "array",
        },
        "rush": {"default": False, "description": "Ship today, at extra cost.", "type": "boolean"},
    }
    assert "Item" in schema["$defs"]  # type: ignore[operator]


def test_parameter_names_that_shadow_base_model_attributes_are_kept() -> None:
    def lookup(json: str, model_config: int = 0, schema: str = "") -> str:
        return json

    properties = tool(lookup).input_schema["properties"]
    assert list(properties) == ["json", "model_config", "schema"]  # type: ignore[arg-type]


def test_output_schema_comes_from_the_return_annotation() -> None:
    assert tool(place_order).output_schema == {
        "additionalProperties": {"type": "integer"},
        "type": "object",
    }


def test_no_return_annotation_means_no_output_schema() -> None:
    def untyped(x: int):  # type: ignore[no-untyped-def]
        return x

    def returns_none(x: int) -> None:
        return None

    assert tool(untyped).output_schema is None
    assert tool(returns_none).output_schema is None


def test_function_tool_satisfies_the_tool_dyn_protocol() -> None:
    assert isinstance(tool(place_order), ToolDyn)


@pytest.mark.parametrize("signature", ["*args", "**kwargs"])
def test_variadic_parameters_are_refused_naming_the_tool(signature: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"def variadic({signature}): pass", namespace)
    with pytest.raises(ToolRegistrationError) as caught:
        tool(namespace["variadic"])  # type: ignore[call-overload]
    assert caught.value.tool == "variadic"
    assert signature in caught.value.reason


def test_parameter_type_pydantic_cannot_validate_is_refused() -> None:
    def takes_opaque(thing: Opaque) -> None:
        return None

    with pytest.raises(ToolRegistrationError) as caught:
        tool(takes_opaque)
    assert caught.value.tool == "takes_opaque"
    assert caught.value.reason.startswith("unsupported parameter type")


def test_parameter_type_without_json_schema_is_refused() -> None:
    def takes_callback(callback: Callable[[], None]) -> None:
        return None

    with pytest.raises(ToolRegistrationError) as caught:
        tool(takes_callback)
    assert caught.value.reason.startswith("parameter has no JSON Schema")


def test_lambda_needs_an_explicit_name() -> None:
    with pytest.raises(ToolRegistrationError):
        tool(lambda: 1)
    assert tool(name="one")(lambda: 1).name == "one"


def test_annotation_naming_an_undefined_type_is_refused_with_the_reason() -> None:
    def broken(x: Undefined) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(ToolRegistrationError) as caught:
        tool(broken)
    assert "Undefined" in caught.value.reason
