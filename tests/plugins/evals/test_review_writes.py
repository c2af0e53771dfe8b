"""`Dataset.to_file` writes each file whole or not at all, and says when it cannot."""

from __future__ import annotations

import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from neuron_evals import Case, Dataset, DatasetFileError, EqualsExpected


@contextmanager
def _files_at_most(size: int) -> Iterator[None]:
    """While inside, a write past `size` bytes fails with EFBIG, as on a full disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def _dataset(cases: int) -> Dataset:
    return Dataset(
        cases=[Case(f"case {n}", "hi " * 50, expected_output="ho") for n in range(cases)],
        evaluators=[EqualsExpected()],
    )


def test_a_write_that_fails_midway_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    _dataset(1).to_file(path)
    before = path.read_text()
    with (
        _files_at_most(4_096),
        pytest.raises(DatasetFileError, match="cannot write it: ") as raised,
    ):
        _dataset(200).to_file(path)  # about 40 KB
    assert raised.value.path == path
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.yaml"]  # no temporary left


def test_a_missing_folder_is_a_dataset_file_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "d.json"
    with pytest.raises(DatasetFileError, match=r"d\.json: cannot write it: No such file"):
        _dataset(1).to_file(path)


def test_rewriting_a_file_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    _dataset(1).to_file(path)
    path.chmod(0o640)
    _dataset(2).to_file(path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert len(Dataset.from_file(path).cases) == 2


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_lone_surrogate_in_a_case_is_written_escaped_and_reads_back(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"d{suffix}"
    text = "an answer cut mid-escape \ud83d, then \U0001f600"
    Dataset(cases=[Case("c", text)]).to_file(path)
    assert Dataset.from_file(path).cases[0].inputs == text
