"""MaxCost and MaxDuration refuse a limit they cannot compare with when made or read."""

from __future__ import annotations

from pathlib import Path

import pytest
from neuron_evals import Case, Dataset, DatasetFileError, MaxCost, MaxDuration


@pytest.mark.parametrize("limit", ["abc", "NaN", "Infinity", -1, "-0.01", float("inf")])
def test_a_cost_limit_that_is_no_dollar_amount_is_refused_when_made(limit: object) -> None:
    with pytest.raises(ValueError, match=r"MaxCost usd must be a dollar amount such as '0\.05'"):
        MaxCost(limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [-5, float("nan"), float("inf"), True])
def test_a_duration_limit_that_is_no_number_of_seconds_is_refused_when_made(
    limit: float,
) -> None:
    with pytest.raises(ValueError, match="MaxDuration seconds must be a number of seconds"):
        MaxDuration(limit)


@pytest.mark.parametrize("spec", ["{MaxCost: abc}", "{MaxCost: '-1'}", "{MaxDuration: -5}"])
def test_a_file_with_such_a_limit_is_refused_naming_the_case_and_evaluator(
    tmp_path: Path, spec: str
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(f"cases:\n- name: a\n  inputs: hi\n  evaluators: [{spec}]\n")
    with pytest.raises(DatasetFileError, match="must be a") as raised:
        Dataset.from_file(path)
    assert raised.value.case == "a" and raised.value.field == "evaluators[0]"


def test_good_limits_still_read_and_write(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    limits = [MaxCost("0.05"), MaxCost(0), MaxDuration(2.5)]
    Dataset([Case("a", "hi")], evaluators=limits).to_file(path)
    assert [type(e).__name__ for e in Dataset.from_file(path).evaluators] == [
        "MaxCost",
        "MaxCost",
        "MaxDuration",
    ]
