"""Validate a dataset file against `Dataset.json_schema` with `jsonschema`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from neuron_evals import Dataset
from neuron_evals._spec import CustomEvaluator


def file_data(path: Path) -> Any:
    """The document in the YAML or JSON file `path`."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def schema_errors(data: Any, custom: Sequence[CustomEvaluator] = ()) -> list[str]:
    """What the schema of files naming `custom` finds wrong with `data` (nothing: valid)."""
    schema = Dataset.json_schema(custom_evaluators=custom)
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(data)]
