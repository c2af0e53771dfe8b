"""`Specified`: the names and arguments evaluators of cases and of reports share (private)."""

from __future__ import annotations

import dataclasses

from pydantic import JsonValue

from ._json import to_json_value


class Specified:
    """An evaluator as a dataset file names it: its class name and its dataclass fields."""

    def spec_name(self) -> str:
        """The name a dataset file calls it by (the class name)."""
        return type(self).__name__

    def result_name(self) -> str:
        """The name of its result in the report: `evaluation_name`, else `spec_name()`."""
        name = getattr(self, "evaluation_name", None)
        return name if isinstance(name, str) and name else self.spec_name()

    def spec_arguments(self) -> dict[str, JsonValue]:
        """Its arguments as a dataset file holds them: the fields not at their default.

        Raises:
            EvaluatorSpecError: an argument has no JSON form.
        """
        shape: object = self  # a subclass may or may not be a dataclass
        if not dataclasses.is_dataclass(shape):
            return {}
        arguments: dict[str, JsonValue] = {}
        for item in dataclasses.fields(shape):
            value = getattr(self, item.name)
            if item.default is not dataclasses.MISSING and value == item.default:
                continue
            arguments[item.name] = to_json_value(value)
        return arguments
