"""The dataset files the evals how-to writes validate against the schema of files,
and those `from_file` refuses fail it as well."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_docs_examples import ROOT, run_page

PAGE = ROOT / "docs" / "how-to" / "evals.md"

# Run after the page, in its namespace: reads each file it left with the custom
# evaluators it defined, checks it against their schema, prints both verdicts.
_VERDICTS = """
import json as _json
from pathlib import Path as _Path

import jsonschema as _jsonschema
import yaml as _yaml
from neuron_evals import Dataset as _Dataset, DatasetFileError as _Refused
from neuron_evals import Evaluator as _Evaluator, FunctionEvaluator as _Function
from neuron_evals import ReportEvaluator as _Report

_custom = [
    value
    for value in list(globals().values())
    if isinstance(value, _Function)
    or (
        isinstance(value, type)
        and issubclass(value, (_Evaluator, _Report))
        and value.__module__ == "__main__"
    )
]
_checker = _jsonschema.Draft202012Validator(_Dataset.json_schema(custom_evaluators=_custom))
_verdicts = {}
for _file in sorted(_Path().iterdir()):
    if _file.suffix not in (".yaml", ".yml", ".json"):
        continue
    try:
        _Dataset.from_file(_file, custom_evaluators=_custom)
        _reads = True
    except _Refused:
        _reads = False
    _text = _file.read_text()
    _data = _json.loads(_text) if _file.suffix == ".json" else _yaml.safe_load(_text)
    _verdicts[_file.name] = {"reads": _reads, "valid": _checker.is_valid(_data)}
print(_json.dumps({"custom": sorted(map(str, _custom)), "files": _verdicts}))
"""


def test_every_dataset_file_the_evals_page_writes_validates_against_the_schema(
    tmp_path: Path,
) -> None:
    result = run_page(PAGE, tmp_path, after=_VERDICTS)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    # Mentions, brevity, few_tool_calls, MeanLength, model_calls, no_refusal
    assert len(found["custom"]) == 6
    files = found["files"]
    assert {name for name, verdict in files.items() if verdict["reads"]} == {
        "shop.yaml",
        "shop.json",
        "tools.yaml",
    }
    assert {name for name, verdict in files.items() if verdict["valid"]} == {
        "shop.yaml",
        "shop.json",
        "tools.yaml",
    }
    assert {"broken.yaml", "baseline.json", "shop_schema.json"} <= set(files)
