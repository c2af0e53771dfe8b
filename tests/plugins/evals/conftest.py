"""Every dataset file a test writes, or reads whole, validates against its JSON Schema."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from neuron_evals import Dataset
from neuron_evals._schema import custom_evaluators_of
from neuron_evals._spec import CustomEvaluator
from neuron_tracing_otel import uninstrument

from ._schema_check import file_data, schema_errors


@pytest.fixture(autouse=True)
def _dataset_files_validate_against_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Check each file `to_file` wrote and `from_file` read against `Dataset.json_schema`."""
    to_file = Dataset.to_file
    from_file = Dataset.from_file.__func__  # type: ignore[attr-defined]

    def checked_to_file(self: Dataset, path: str | Path, **kwargs: object) -> None:
        to_file(self, path, **kwargs)  # type: ignore[arg-type]
        everything = [
            *self.evaluators,
            *(evaluator for case in self.cases for evaluator in case.evaluators),
            *self.report_evaluators,
        ]
        errors = schema_errors(file_data(Path(path)), custom_evaluators_of(everything))
        assert errors == [], f"{path} written by to_file fails its schema"

    def checked_from_file(
        cls: type[Dataset], path: str | Path, *, custom_evaluators: Sequence[CustomEvaluator] = ()
    ) -> Dataset:
        dataset: Dataset = from_file(cls, path, custom_evaluators=custom_evaluators)
        errors = schema_errors(file_data(Path(path)), custom_evaluators)
        assert errors == [], f"{path} read by from_file fails its schema"
        return dataset

    monkeypatch.setattr(Dataset, "to_file", checked_to_file)
    monkeypatch.setattr(Dataset, "from_file", classmethod(checked_from_file))


@pytest.fixture
def tracing_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tracing off around a test that turns it on itself; no metric export from the test process."""
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    uninstrument()
    yield
    uninstrument()
