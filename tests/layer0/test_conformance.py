"""Every vector the Rust reference generated parses and dumps back to the same JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

import layer0

VECTORS = Path(__file__).resolve().parents[3] / "shared" / "layer0-vectors"


def _vectors() -> list[Any]:
    if not VECTORS.is_dir():
        return [
            pytest.param(
                None,
                None,
                marks=pytest.mark.skip(
                    reason=f"the reference vectors are not here ({VECTORS}); "
                    "they come with the project's shared/ folder, not with a lone clone"
                ),
                id="vectors-absent",
            )
        ]
    params = []
    for path in sorted(VECTORS.glob("*.json")):
        if path.name.startswith("_"):
            continue
        for vector in json.loads(path.read_text(encoding="utf-8")):
            params.append(pytest.param(path.stem, vector, id=f"{path.stem}/{vector['name']}"))
    return params


def typed(value: Any) -> Any:
    """The value with every scalar tagged by its type, so True != 1 and 1 != 1.0."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def test_every_reference_vector_is_present() -> None:
    if not VECTORS.is_dir():
        pytest.skip(f"the reference vectors are not here ({VECTORS})")
    count = sum(
        len(json.loads(p.read_text(encoding="utf-8")))
        for p in VECTORS.glob("*.json")
        if not p.name.startswith("_")
    )
    assert count == 173


@pytest.mark.parametrize(("type_name", "vector"), _vectors())
def test_vector_round_trips_to_the_same_json_value_and_bytes(
    type_name: str, vector: dict[str, Any]
) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(layer0, type_name))

    parsed = adapter.validate_python(vector["json"])
    dumped = adapter.dump_python(parsed, mode="json")
    assert typed(dumped) == typed(vector["json"])

    from_wire = adapter.validate_json(vector["wire"])
    assert from_wire == parsed
    wire = adapter.dump_json(from_wire).decode()
    if wire != vector["wire"]:
        # Only float exponent spelling may differ (Python's 1e-07 vs Rust's 1e-7).
        assert typed(json.loads(wire)) == typed(json.loads(vector["wire"]))
        assert "e" in vector["wire"]


PRECISION = VECTORS / "_decimal_precision.json"


def _precision_vectors() -> list[Any]:
    if not PRECISION.is_file():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(reason=f"the reference vectors are not here ({VECTORS})"),
                id="vectors-absent",
            )
        ]
    vectors = json.loads(PRECISION.read_text(encoding="utf-8"))
    return [pytest.param(vector, id=vector["name"]) for vector in vectors]


def test_every_decimal_precision_vector_is_present() -> None:
    if not PRECISION.is_file():
        pytest.skip(f"the reference vectors are not here ({VECTORS})")
    assert len(json.loads(PRECISION.read_text(encoding="utf-8"))) == 59


@pytest.mark.parametrize("vector", _precision_vectors())
def test_money_beyond_28_digits_is_refused_or_rounded_to_the_references_text(
    vector: dict[str, Any],
) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(layer0.Decimal)
    config = f'{{"max_cost":{vector["input_wire"]}}}'
    if not vector["ok"]:
        with pytest.raises(ValidationError):
            adapter.validate_json(vector["input_wire"])
        with pytest.raises(ValidationError):
            layer0.TurnConfig.model_validate_json(config)
        return
    canonical = vector["canonical_wire"]
    assert adapter.dump_json(adapter.validate_json(vector["input_wire"])).decode() == canonical
    parsed = layer0.TurnConfig.model_validate_json(config)
    assert json.loads(parsed.model_dump_json())["max_cost"] == json.loads(canonical)
    # The reference's text is a fixed point: it reads back as itself.
    assert adapter.dump_json(adapter.validate_json(canonical)).decode() == canonical
