"""Hostile dataset files: what would hang validation or hold no number is refused, named."""

from __future__ import annotations

import json
from pathlib import Path

import neuron_evals._files
import pytest
from neuron_evals import Dataset, DatasetFileError


def _laughs(levels: int) -> str:
    """A YAML `expected_output` whose aliases expand to 9**(levels + 1) strings."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels + 1)]
    body = "".join(f"    {line}\n" for line in lines)
    return f"cases:\n- name: laughs\n  inputs: hi\n  expected_output:\n{body}"


def test_yaml_aliases_expanding_past_the_bound_are_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(_laughs(9))  # a few hundred bytes, 9**10 strings expanded
    with pytest.raises(
        DatasetFileError, match="aliases add more than 1,000,000 values once expanded"
    ) as raised:
        Dataset.from_file(path)
    assert raised.value.path == path
    assert raised.value.case == "laughs"
    assert raised.value.field is not None and raised.value.field.startswith("expected_output.a")


def test_yaml_aliases_shared_within_the_bound_still_read(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(
        "evaluators: &checks [EqualsExpected]\n"
        "cases:\n"
        "- {name: a, inputs: hi, expected_output: hi, evaluators: *checks}\n"
        "- {name: b, inputs: ho, expected_output: ho, evaluators: *checks}\n"
    )
    dataset = Dataset.from_file(path)
    assert [len(case.evaluators) for case in dataset.cases] == [1, 1]


@pytest.mark.parametrize(
    ("suffix", "value", "shown"),
    [
        (".json", "NaN", "nan"),
        (".json", "-Infinity", "-inf"),
        (".json", "1e400", "inf"),
        (".yaml", ".nan", "nan"),
        (".yaml", ".inf", "inf"),
    ],
)
def test_a_number_that_is_no_number_is_refused_naming_where(
    tmp_path: Path, suffix: str, value: str, shown: str
) -> None:
    path = tmp_path / f"odd{suffix}"
    path.write_text(
        f'{{"cases": [{{"name": "c", "inputs": "hi", "metadata": {{"limit": {value}}}}}]}}'
    )
    with pytest.raises(DatasetFileError) as raised:
        Dataset.from_file(path)
    assert (
        str(raised.value)
        == f"{path}, case 'c', field 'metadata.limit': {shown} is no number a dataset can hold"
    )


def test_a_file_that_is_no_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"cases:\n- name: caf\xe9\n  inputs: hi\n")
    with pytest.raises(DatasetFileError) as raised:
        Dataset.from_file(path)
    assert str(raised.value) == f"{path}: not UTF-8 text: byte 19 (line 2) is 0xe9"


def test_a_file_past_the_size_bound_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(neuron_evals._files, "MAX_FILE_BYTES", 1_000)
    path = tmp_path / "big.json"
    path.write_text('{"cases": [' + ", ".join(['{"name": "c", "inputs": "x"}'] * 100) + "]}")
    with pytest.raises(DatasetFileError, match="larger than 1,000 bytes; split its cases"):
        Dataset.from_file(path)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_an_integer_too_long_to_read_is_a_dataset_file_error(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"long{suffix}"
    path.write_text(
        '{"cases": [{"name": "c", "inputs": "x", "expected_output": ' + "9" * 5_000 + "}]}"
    )
    with pytest.raises(DatasetFileError, match="a number too long to read: Exceeds the limit"):
        Dataset.from_file(path)


def test_a_file_writing_out_more_values_than_aliases_may_add_still_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(neuron_evals._files, "MAX_FILE_VALUES", 100)
    path = tmp_path / "big.json"
    cases = [
        {"name": f"c{n}", "inputs": "x", "metadata": {"k": list(range(5))}} for n in range(100)
    ]
    path.write_text(json.dumps({"cases": cases}))
    assert len(Dataset.from_file(path).cases) == 100  # 1,000 values written, none added


def test_a_yaml_key_given_twice_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "merged.yaml"
    path.write_text(
        "cases:\n- {name: a, inputs: hi}\n- {name: b, inputs: ho}\n"
        "cases:\n- {name: c, inputs: hey}\n"  # pasted below: the parser kept only c
    )
    with pytest.raises(DatasetFileError, match="the key 'cases' is given twice") as raised:
        Dataset.from_file(path)
    assert "line 4" in str(raised.value)


def test_a_json_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text('{"cases": [{"name": "a", "inputs": "hi", "inputs": "ho"}]}')
    with pytest.raises(DatasetFileError, match="not valid JSON: the key 'inputs' is given twice"):
        Dataset.from_file(path)


def test_keys_a_yaml_merge_brings_may_still_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "merge.yaml"
    path.write_text(
        "cases:\n- &base {name: a, inputs: hi, metadata: {x: 1}}\n- {<<: *base, name: b}\n"
    )
    assert [case.name for case in Dataset.from_file(path).cases] == ["a", "b"]
