"""The committed JSON Schema matches the models, and the command prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from layer0.schema import wire_schema, wire_schema_text

COMMITTED = Path(__file__).resolve().parents[2] / "schema" / "layer0.schema.json"


def test_committed_schema_matches_the_models() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == wire_schema_text(), (
        "schema/layer0.schema.json drifted from the models; regenerate it with "
        "`python -m layer0.schema > schema/layer0.schema.json`"
    )


def test_schema_command_prints_the_schema() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "layer0.schema"], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == wire_schema()


def test_schema_accepts_wire_values_and_rejects_a_numeric_cost() -> None:
    schema = wire_schema()
    turn_output = {"$defs": schema["$defs"], **schema["$defs"]["TurnOutput"]}
    output = {
        "message": "hi",
        "exit_reason": {"observer_halt": {"reason": "r"}},
        "metadata": {
            "tokens_in": 1,
            "tokens_out": 2,
            "cost": "0.0003",
            "turns_used": 1,
            "tools_called": [],
            "duration": 5,
        },
        "effects": [{"type": "write_memory", "scope": "global", "key": "k", "value": None}],
    }
    jsonschema.validate(output, turn_output)
    output["metadata"]["cost"] = 0.0003  # type: ignore[index]
    validator = jsonschema.Draft202012Validator(turn_output)
    assert not validator.is_valid(output)
