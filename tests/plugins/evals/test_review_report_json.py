"""`EvaluationReport.from_json` refuses what is no report with a `ValidationError`, as it says."""

from __future__ import annotations

import pytest
from neuron_evals import EvaluationReport
from pydantic import ValidationError


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "Invalid JSON: Expecting value"),
        ("[" * 100_000 + "]" * 100_000, "Invalid JSON: nested too deeply"),
        (b"\xff\xfe{", "Invalid JSON"),
    ],
)
def test_text_that_is_no_json_is_a_validation_error(text: str | bytes, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        EvaluationReport.from_json(text)
