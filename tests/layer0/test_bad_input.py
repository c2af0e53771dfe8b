"""Bad input raises a ValidationError that says where and what was expected."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from moneyed import Money
from pydantic import TypeAdapter, ValidationError

import layer0

OUTPUT = TypeAdapter(layer0.TurnOutput)
INPUT = TypeAdapter(layer0.TurnInput)
ZERO_METADATA = {
    "tokens_in": 0,
    "tokens_out": 0,
    "cost": "0",
    "turns_used": 0,
    "tools_called": [],
    "duration": 0,
}


def _output(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "message": "hi",
        "exit_reason": "complete",
        "metadata": dict(ZERO_METADATA),
        "effects": [],
    }
    value.update(changes)
    return value


def _error_text(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(exc.value)


def test_error_names_the_path_of_a_bad_scope_and_the_choices() -> None:
    bad = _output(
        effects=[{"type": "write_memory", "scope": {"sesion": "x"}, "key": "k", "value": 1}]
    )
    with pytest.raises(ValidationError) as exc:
        OUTPUT.validate_json(json.dumps(bad))
    error = exc.value.errors()[0]
    assert error["loc"] == ("effects", 0, "write_memory", "scope")
    text = _error_text(exc)
    assert "effects.0.write_memory.scope" in text
    assert "session" in text and "workflow" in text and "global" in text


def test_error_in_a_tagged_union_names_the_variant_and_the_field() -> None:
    with pytest.raises(ValidationError) as exc:
        TypeAdapter(layer0.Effect).validate_python({"type": "handoff", "agent": "a"})
    assert exc.value.errors()[0]["loc"] == ("handoff", "state")
    assert exc.value.error_count() == 1


def test_unknown_tag_lists_the_known_tags() -> None:
    with pytest.raises(ValidationError) as exc:
        TypeAdapter(layer0.Effect).validate_python({"type": "WriteMemory"})
    text = _error_text(exc)
    assert "'WriteMemory'" in text and "'write_memory'" in text and "'delete_memory'" in text


def test_cost_as_json_number_is_rejected_saying_costs_are_decimal_strings() -> None:
    bad = _output(metadata={**ZERO_METADATA, "cost": 0.0003})
    with pytest.raises(ValidationError) as exc:
        OUTPUT.validate_json(json.dumps(bad))
    assert exc.value.errors()[0]["loc"] == ("metadata", "cost")
    assert "costs are decimal strings in USD" in _error_text(exc)


def test_integer_zero_cost_is_rejected_too() -> None:
    with pytest.raises(ValidationError, match="not JSON numbers"):
        TypeAdapter(layer0.Cost).validate_json("0")


def test_non_usd_money_is_rejected_naming_the_currency() -> None:
    with pytest.raises(ValidationError, match="costs are in USD; got a Money in EUR"):
        layer0.TurnConfig(max_cost=Money("1", "EUR"))


BAD_COSTS = [
    pytest.param("1e999999999", "exponent must be at most 28", id="text-huge-exponent"),
    pytest.param("-1e999999999", "exponent must be at most 28", id="text-huge-negative"),
    pytest.param("1e-999999999", "at most 28 decimal places", id="text-tiny-exponent"),
    pytest.param("NaN", "decimal strings", id="text-nan"),
    pytest.param("Infinity", "decimal strings", id="text-infinity"),
    pytest.param("-inf", "decimal strings", id="text-minus-inf"),
    pytest.param("79228162514264337593543950336", "less than 2", id="text-2**96"),
    pytest.param(Decimal("1e999999999"), "less than 2", id="decimal-huge"),
    pytest.param(Decimal("NaN"), "finite", id="decimal-nan"),
    pytest.param(Decimal("sNaN"), "finite", id="decimal-snan"),
    pytest.param(Decimal("-Infinity"), "finite", id="decimal-minus-infinity"),
    pytest.param(Money("1e999999999", "USD"), "less than 2", id="money-huge"),
    pytest.param(Money(Decimal("Infinity"), "USD"), "finite", id="money-infinity"),
]


@pytest.mark.parametrize(("value", "reason"), BAD_COSTS)
def test_a_cost_out_of_range_or_not_finite_is_a_validation_error_naming_the_field(
    value: object, reason: str
) -> None:
    with pytest.raises(ValidationError, match=reason) as exc:
        layer0.TurnConfig(max_cost=value)
    assert [error["loc"] for error in exc.value.errors()] == [("max_cost",)]


@pytest.mark.parametrize(
    "text", ["1e999999999", "-1e999999999", "1e-999999999", "NaN", "Infinity", "-0e99999999999"]
)
def test_a_cost_out_of_range_on_the_wire_is_a_validation_error_naming_the_field(
    text: str,
) -> None:
    with pytest.raises(ValidationError) as exc:
        layer0.TurnConfig.model_validate_json(json.dumps({"max_cost": text}))
    assert [error["loc"] for error in exc.value.errors()] == [("max_cost",)]
    bad = _output(metadata={**ZERO_METADATA, "cost": text})
    with pytest.raises(ValidationError) as exc:
        OUTPUT.validate_json(json.dumps(bad))
    assert [error["loc"] for error in exc.value.errors()] == [("metadata", "cost")]


def test_negative_zero_cost_is_plain_zero_as_in_the_reference() -> None:
    for value in ("-0", "-0.00", Decimal("-0.00"), Money("-0.00", "USD")):
        config = layer0.TurnConfig(max_cost=value)
        assert config.max_cost is not None and not config.max_cost.amount.is_signed()
    assert layer0.TurnConfig(max_cost="-0.00").model_dump(mode="json")["max_cost"] == "0.00"


def test_unknown_keys_are_ignored() -> None:
    value = {"message": "hi", "trigger": "user", "future_field": {"x": 1}}
    parsed = INPUT.validate_json(json.dumps(value))
    assert parsed == layer0.TurnInput(message="hi", trigger="user")
    assert "future_field" not in INPUT.dump_python(parsed, mode="json")


@pytest.mark.parametrize(
    ("adapter", "field", "value"),
    [
        (OUTPUT, "effects", _output()),
        (
            TypeAdapter(layer0.EnvironmentSpec),
            "isolation",
            {"isolation": [], "credentials": []},
        ),
        (
            TypeAdapter(layer0.EnvironmentSpec),
            "credentials",
            {"isolation": [], "credentials": []},
        ),
    ],
)
def test_explicit_null_in_a_defaulted_list_field_is_rejected(
    adapter: TypeAdapter[Any], field: str, value: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError) as exc:
        adapter.validate_python({**value, field: None})
    assert exc.value.errors()[0]["loc"] == (field,)


def test_missing_defaulted_fields_take_their_defaults() -> None:
    output = OUTPUT.validate_python({k: v for k, v in _output().items() if k != "effects"})
    assert output.effects == []
    spec = TypeAdapter(layer0.EnvironmentSpec).validate_python({})
    assert spec.isolation == [] and spec.credentials == []
    assert INPUT.validate_python({"message": "m", "trigger": "task"}).metadata is None


def test_missing_free_form_field_is_an_error_but_explicit_null_is_fine() -> None:
    block = TypeAdapter(layer0.ContentBlock)
    with pytest.raises(ValidationError) as exc:
        block.validate_python({"type": "tool_use", "id": "t", "name": "n"})
    assert exc.value.errors()[0]["loc"] == ("tool_use", "input")
    assert block.validate_python({"type": "tool_use", "id": "t", "name": "n", "input": None})


def test_missing_metadata_field_is_an_error() -> None:
    metadata = {k: v for k, v in ZERO_METADATA.items() if k != "tools_called"}
    with pytest.raises(ValidationError) as exc:
        TypeAdapter(layer0.TurnMetadata).validate_python(metadata)
    assert exc.value.errors()[0]["loc"] == ("tools_called",)


@pytest.mark.parametrize("value", ['"observer_halt"', '"custom"', '"Complete"', '{"a":1,"b":2}'])
def test_exit_reason_rejects_bare_data_variants_wrong_case_and_many_keys(value: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(layer0.ExitReason).validate_json(value)


@pytest.mark.parametrize(
    ("type_name", "value", "expected"),
    [
        ("ExitReason", '{"timeout":null}', '"timeout"'),
        ("Scope", '{"global":null}', '"global"'),
        ("CredentialInjection", '{"sidecar":null}', '"sidecar"'),
        ("TriggerType", '{"user":null}', '"user"'),
    ],
)
def test_unit_variant_in_object_form_is_accepted_and_written_as_a_string(
    type_name: str, value: str, expected: str
) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(layer0, type_name))
    assert adapter.dump_json(adapter.validate_json(value)).decode() == expected


@pytest.mark.parametrize("value", ["{}", "null", "5"])
def test_content_must_be_a_string_or_an_array(value: str) -> None:
    with pytest.raises(ValidationError, match="content is a string or an array of content blocks"):
        TypeAdapter(layer0.Content).validate_json(value)


@pytest.mark.parametrize("value", ["5.0", "-1", '"1500"', "true", "18446744073709551616"])
def test_duration_must_be_a_non_negative_u64_integer(value: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(layer0.DurationMs).validate_json(value)


def test_is_error_must_be_a_json_bool_not_a_number() -> None:
    block = {"type": "tool_result", "tool_use_id": "t", "content": "c", "is_error": 1}
    with pytest.raises(ValidationError):
        TypeAdapter(layer0.ContentBlock).validate_python(block)


def test_ids_must_be_strings() -> None:
    with pytest.raises(ValidationError):
        INPUT.validate_python({"message": "m", "trigger": "user", "session": 42})


def test_models_are_frozen() -> None:
    value = layer0.TurnInput(message="hi", trigger="user")
    with pytest.raises(ValidationError):
        value.session = "s"  # type: ignore[misc]
