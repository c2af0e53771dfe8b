"""A function's parameters as a pydantic model: the schema and validation behind `@tool`."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PydanticUserError, create_model
from pydantic.fields import FieldInfo

from .errors import ToolRegistrationError
from .schema import model_json_schema

# Extra keys are refused so a model that invents a parameter hears about it.
_CONFIG: Final = ConfigDict(extra="forbid")
_UNSUPPORTED: Final = {
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}


class Arguments:
    """Validates a tool's JSON input into the positional and keyword arguments of its function.

    The pydantic model is built once, at decoration time. Its fields are named
    `p0`, `p1`, ... with the real parameter names as aliases, so parameters
    such as `json` or `model_config` cannot clash with `BaseModel` attributes.
    """

    __slots__ = ("_keyword", "_model", "_positional", "_validate", "schema")

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        tool: str,
        descriptions: Mapping[str, str],
        skip: int = 0,
    ) -> None:
        """Build the model for `function` without its first `skip` parameters.

        Raises:
            ToolRegistrationError: a parameter cannot be described as JSON Schema.
        """
        parameters = list(inspect.signature(function).parameters.values())[skip:]
        hints = type_hints(function, tool=tool)
        fields: dict[str, Any] = {}
        for index, parameter in enumerate(parameters):
            if parameter.kind in _UNSUPPORTED:
                reason = f"{_UNSUPPORTED[parameter.kind]} parameters cannot be described to a model"
                raise ToolRegistrationError(tool, reason)
            annotation = hints.get(parameter.name, Any)
            fields[f"p{index}"] = (annotation, _field(parameter, descriptions))
        self._model: Final = _create_model(tool, fields)
        # The validator itself when the model is built: `model_validate` adds a
        # Python call around it on every tool call.
        self._validate: Final[Callable[[object], BaseModel]] = (
            self._model.__pydantic_validator__.validate_python
            if self._model.__pydantic_complete__
            else self._model.model_validate
        )
        positional_only = inspect.Parameter.POSITIONAL_ONLY
        # Positional-only parameters come first in any signature, and the model's
        # fields keep the parameters' order: the first values are the positional ones.
        self._positional: Final = sum(1 for p in parameters if p.kind is positional_only)
        self._keyword: Final = tuple(p.name for p in parameters[self._positional :])
        self.schema: Final = _schema(self._model, tool=tool)

    def bind(self, input: dict[str, JsonValue]) -> tuple[list[Any], dict[str, Any]]:
        """Validate and coerce `input`; raise `pydantic.ValidationError` if it does not fit."""
        values = self._validate(input).__dict__.values()
        split = self._positional
        if not split:
            return [], dict(zip(self._keyword, values, strict=True))
        listed = list(values)
        return listed[:split], dict(zip(self._keyword, listed[split:], strict=True))


def type_hints(function: Callable[..., Any], *, tool: str) -> dict[str, Any]:
    """Resolve `function`'s annotations, naming the tool if a forward reference is undefined."""
    try:
        return typing.get_type_hints(_annotated(function), include_extras=True)
    except NameError as exc:
        # Under `from __future__ import annotations`, types defined inside a
        # function body are not visible here; they must live at module level.
        raise ToolRegistrationError(tool, f"cannot resolve a type annotation: {exc}") from exc


def _annotated(function: Callable[..., Any]) -> object:
    """Return the object whose annotations describe calling `function`."""
    if isinstance(function, functools.partial):
        return _annotated(function.func)
    if inspect.isroutine(function) or inspect.isclass(function):
        return function
    # A callable instance: its signature is that of its class's __call__.
    return type(function).__call__


def _field(parameter: inspect.Parameter, descriptions: Mapping[str, str]) -> FieldInfo:
    default = ... if parameter.default is inspect.Parameter.empty else parameter.default
    description = descriptions.get(parameter.name)
    info: FieldInfo = Field(default, alias=parameter.name, description=description)
    return info


def _create_model(tool: str, fields: dict[str, Any]) -> type[BaseModel]:
    try:
        model: type[BaseModel] = create_model(f"{tool}_arguments", __config__=_CONFIG, **fields)
    except PydanticUserError as exc:
        raise ToolRegistrationError(tool, f"unsupported parameter type: {exc.message}") from exc
    return model


def _schema(model: type[BaseModel], *, tool: str) -> dict[str, JsonValue]:
    try:
        return model_json_schema(model)
    except PydanticUserError as exc:
        raise ToolRegistrationError(tool, f"parameter has no JSON Schema: {exc.message}") from exc
