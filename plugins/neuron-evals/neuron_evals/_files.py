"""Datasets in YAML and JSON files, validated whole before any of it is used (private)."""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from layer0 import TurnInput

from ._json import to_json_value
from ._spec import Built, CustomEvaluator, build, registry, report_registry, spec_of
from .case import Case
from .errors import DatasetFileError, EvalsError
from .evaluator import Evaluator
from .report_evaluator import ReportEvaluator

YAML_SUFFIXES: Final = (".yaml", ".yml")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
MAX_FILE_BYTES: Final = 100_000_000
"""The largest dataset file read: parsed, a file takes many times its size in memory."""
MAX_FILE_VALUES: Final = 1_000_000
"""The most values (each item and scalar counted) a dataset file's YAML aliases may add
once expanded, beyond those written out: validation walks every one."""
JSON_SUFFIXES: Final = (".json",)


class _CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    inputs: str | dict[str, JsonValue]
    expected_output: JsonValue = None
    metadata: dict[str, JsonValue] | None = None
    evaluators: list[JsonValue] = Field(default_factory=list)


class _DatasetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_ref: str | None = Field(default=None, alias="$schema")  # for editors; ignored
    name: str | None = None
    cases: list[_CaseFile]
    evaluators: list[JsonValue] = Field(default_factory=list)
    report_evaluators: list[JsonValue] = Field(default_factory=list)


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix in JSON_SUFFIXES:
        return "json"
    raise DatasetFileError(path, f"unknown suffix {path.suffix!r}; use .yaml, .yml or .json")


class _TwiceGivenKeyError(ValueError):
    """A JSON object gives one key twice."""


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of `pairs`; a key given twice is refused (the parser would keep the last)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _TwiceGivenKeyError(f"the key {key!r} is given twice in one object")
        found[key] = value
    return found


_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping.

    Either loader would keep the last silently: a second `cases:` would drop every
    case above it. Keys a merge (`<<: *base`) brings may still be overridden.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def _parse(path: Path) -> Any:
    kind = _format(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)  # no more, whatever the file is
    except OSError as exc:
        raise DatasetFileError(path, f"cannot read it: {exc.strerror or exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise DatasetFileError(
            path, f"larger than {MAX_FILE_BYTES:,} bytes; split its cases into several files"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetFileError(
            path, f"not UTF-8 text: byte {exc.start + 1} (line {line}) is {raw[exc.start]:#04x}"
        ) from None
    try:
        data = (
            yaml.load(text, Loader=_Loader)  # safe: a SafeLoader that also checks keys
            if kind == "yaml"
            else json.loads(text, object_pairs_hook=_json_object)
        )
    except _TwiceGivenKeyError as exc:
        raise DatasetFileError(path, f"not valid JSON: {exc}") from exc
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise DatasetFileError(path, f"not valid {kind.upper()}: {exc}") from exc
    except ValueError as exc:  # an integer of more digits than Python converts (4300)
        raise DatasetFileError(path, f"a number too long to read: {exc}") from exc
    except RecursionError as exc:  # the parsers recurse once per level of nesting
        raise DatasetFileError(path, f"nested too deeply to read as {kind.upper()}") from exc
    _check_values(path, data)
    return data


def _check_values(path: Path, data: Any) -> None:
    """Refuse a non-finite number, and aliases adding more than `MAX_FILE_VALUES` values.

    YAML aliases share one object, so the file is small and parses fast, but every
    later step walks the expansion (billion laughs). Sizes are summed once per shared
    object, children first, without recursion; a cycle is left for validation, which
    names it. What the file writes out is never refused, however many values it holds.
    """
    bound = MAX_FILE_VALUES + _written(data)
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, list[int | str], bool]] = [(data, [], False)]
    while stack:
        value, loc, done = stack.pop()
        children = _children(value)
        if done:
            sizes[id(value)] = 1 + sum(sizes.get(id(child), 0) for _, child in children)
            if sizes[id(value)] > bound:
                raise _located(
                    path,
                    data,
                    loc,
                    f"its aliases add more than {MAX_FILE_VALUES:,} values once "
                    "expanded; write the values out, or share fewer",
                )
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise _located(path, data, loc, f"{value} is no number a dataset can hold")
        if id(value) in sizes or not children:
            sizes.setdefault(id(value), 1)
            continue
        sizes[id(value)] = 0  # in progress: a cycle back to it counts nothing more
        stack.append((value, loc, True))
        stack.extend((child, [*loc, key], False) for key, child in children)


def _written(data: Any) -> int:
    """How many values the file holds as written: each shared list or mapping counted once."""
    seen: set[int] = set()
    count = 1
    stack = [data]
    while stack:
        value = stack.pop()
        if id(value) in seen or not isinstance(value, dict | list):
            continue
        seen.add(id(value))
        items = list(value.values()) if isinstance(value, dict) else value
        count += len(items)
        stack.extend(items)
    return count


def _children(value: Any) -> list[tuple[int | str, Any]]:
    if isinstance(value, dict):
        return [(str(key), item) for key, item in value.items()]
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def _located(path: Path, data: Any, loc: Sequence[int | str], message: str) -> DatasetFileError:
    """The error `message` at `loc` in the file's data, naming the case when inside one."""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        return DatasetFileError(
            path, message, case=_case_label(data, loc[1]), field=_field(loc[2:]) or None
        )
    return DatasetFileError(path, message, field=_field(loc) or None)


def _case_label(data: Any, index: int) -> str:
    """The case's name in the raw data, else `#<n>` (1-based)."""
    cases = data.get("cases") if isinstance(data, dict) else None
    if isinstance(cases, list) and index < len(cases):
        case = cases[index]
        if isinstance(case, dict) and isinstance(case.get("name"), str):
            return str(case["name"])
    return f"#{index + 1}"


def _field(parts: Sequence[int | str]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _keys(model: type[BaseModel]) -> str:
    return ", ".join(field.alias or name for name, field in model.model_fields.items())


def _invalid(path: Path, data: Any, error: ValidationError) -> DatasetFileError:
    first = error.errors()[0]
    loc = list(first["loc"])
    more = error.error_count() - 1
    message = first["msg"]
    if first["type"] == "extra_forbidden" and len(loc) in (1, 3):
        known = _DatasetFile if len(loc) == 1 else _CaseFile
        message = f"unknown key {loc[-1]!r}; the keys are: {_keys(known)}"
    message += f" (and {more} more error(s))" if more else ""
    return _located(path, data, loc, message)


def _evaluators(
    path: Path,
    specs: list[JsonValue],
    factories: Mapping[str, Callable[..., Built]],
    case: str | None,
    key: str = "evaluators",
) -> list[Built]:
    built: list[Built] = []
    for index, spec in enumerate(specs):
        try:
            built.append(build(spec, factories))
        except (EvalsError, TypeError, ValueError) as exc:
            raise DatasetFileError(path, str(exc), case=case, field=f"{key}[{index}]") from exc
    return built


def _inputs(path: Path, case: _CaseFile) -> str | TurnInput:
    if isinstance(case.inputs, str):
        return case.inputs
    try:
        return TurnInput.model_validate(case.inputs)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DatasetFileError(
            path, first["msg"], case=case.name, field=_field(["inputs", *first["loc"]])
        ) from exc


def read_dataset(
    path: Path, custom: Sequence[CustomEvaluator]
) -> tuple[str | None, list[Case], list[Evaluator], list[ReportEvaluator]]:
    """The name, cases, evaluators and report evaluators of the dataset file `path`.

    Raises:
        DatasetFileError: the file is unreadable or invalid anywhere.
    """
    data = _parse(path)
    try:
        parsed = _DatasetFile.model_validate(data)
    except ValidationError as exc:
        raise _invalid(path, data, exc) from exc
    try:
        factories = registry(custom)
        report_factories = report_registry(custom)
    except ValueError as exc:
        raise DatasetFileError(path, str(exc)) from exc
    evaluators = _evaluators(path, parsed.evaluators, factories, None)
    report_evaluators = _evaluators(
        path, parsed.report_evaluators, report_factories, None, "report_evaluators"
    )
    cases: list[Case] = []
    seen: set[str] = set()
    for item in parsed.cases:
        if item.name in seen:
            raise DatasetFileError(path, "two cases have this name", case=item.name, field="name")
        seen.add(item.name)
        cases.append(
            Case(
                item.name,
                _inputs(path, item),
                expected_output=item.expected_output,
                metadata=item.metadata,
                evaluators=_evaluators(path, item.evaluators, factories, item.name),
            )
        )
    return parsed.name, cases, evaluators, report_evaluators


def _case_data(case: Case) -> dict[str, JsonValue]:
    data: dict[str, JsonValue] = {"name": case.name}
    data["inputs"] = (
        case.inputs
        if isinstance(case.inputs, str)
        else case.inputs.model_dump(mode="json", exclude_none=True)
    )
    if case.expected_output is not None:
        data["expected_output"] = to_json_value(case.expected_output)
    if case.metadata:
        data["metadata"] = to_json_value(dict(case.metadata))
    if case.evaluators:
        data["evaluators"] = [spec_of(evaluator) for evaluator in case.evaluators]
    return data


def dataset_text(
    path: Path,
    name: str | None,
    cases: Sequence[Case],
    evaluators: Sequence[Evaluator],
    report_evaluators: Sequence[ReportEvaluator] = (),
    *,
    schema_ref: str | None = None,
) -> str:
    """The text of the dataset's file `path`, YAML or JSON by its suffix.

    With `schema_ref`, it points at its JSON Schema: a JSON file by its
    `$schema` key, a YAML one by a `# yaml-language-server: $schema=` line.

    Raises:
        DatasetFileError: an unknown suffix, or an evaluator with no form in a file.
    """
    kind = _format(path)
    data: dict[str, JsonValue] = {}
    if schema_ref is not None and kind == "json":
        data["$schema"] = schema_ref
    if name is not None:
        data["name"] = name
    try:
        data["cases"] = [_case_data(case) for case in cases]
        if evaluators:
            data["evaluators"] = [spec_of(evaluator) for evaluator in evaluators]
        if report_evaluators:
            data["report_evaluators"] = [spec_of(evaluator) for evaluator in report_evaluators]
    except EvalsError as exc:
        raise DatasetFileError(path, str(exc)) from exc
    if kind == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        # A lone surrogate (a model's broken escape) is no UTF-8; its JSON escape reads
        # back the same, as YAML's writer escapes it too.
        return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if schema_ref is not None:
        text = f"# yaml-language-server: $schema={schema_ref}\n{text}"
    return text


def write_whole(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all, keeping an existing file's permissions.

    The text goes to a new file beside it, renamed over `path` once complete: a
    full disk or a crash midway leaves the old file as it was, never half of it.

    Raises:
        DatasetFileError: the file cannot be written (the reason named).
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DatasetFileError(path, f"cannot write it: {exc.strerror or exc}") from exc
