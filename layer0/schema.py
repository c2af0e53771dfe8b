"""The JSON Schema of layer0's wire format, for implementations in other languages.

Run `python -m layer0.schema` to print the schema of `TurnInput` and
`TurnOutput` (with every type they use under `$defs`). A copy lives in the
repository's `schema/` folder; a test fails when it drifts from the models.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic.json_schema import models_json_schema

from .turn_input import TurnInput
from .turn_output import TurnOutput

__all__ = ["wire_schema", "wire_schema_text"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def wire_schema() -> dict[str, Any]:
    """Return one JSON Schema document describing TurnInput and TurnOutput."""
    # Validation mode: the accepted input form, which is also what is written.
    _, schema = models_json_schema(
        [(TurnInput, "validation"), (TurnOutput, "validation")],
        title="layer0 wire format",
        description="TurnInput and TurnOutput as JSON, shared with the Rust layer0 crate.",
    )
    return {"$schema": _DIALECT, **schema}


def wire_schema_text() -> str:
    """Return the schema as the committed file holds it: indented, keys sorted, newline-ended."""
    return json.dumps(wire_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    """Print the schema to standard output."""
    sys.stdout.write(wire_schema_text())


if __name__ == "__main__":
    main()
