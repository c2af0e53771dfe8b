"""Machinery for the reference's externally tagged enums.

serde writes a unit variant as a bare string (`"complete"`) and a data variant
as a one-key object (`{"custom": "x"}`, `{"observer_halt": {"reason": …}}`).
Unit variants are `Literal` strings here; data variants subclass
`ExternalVariant`, which unwraps the key on input and adds it back on output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

UNIT: Final = "unit"
"""The discriminator tag of the unit variants (the bare strings) of a union."""


class Frozen(BaseModel):
    """Base of every layer0 model: immutable; unknown keys ignored."""

    # Schemas are built on first use, not at import: most programs use few of these types.
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class ExternalVariant(Frozen):
    """A data variant of an externally tagged enum: `{"<tag>": payload}` on the wire.

    `newtype` names the single field that carries the payload of a newtype
    variant (`{"custom": "x"}`); struct variants leave it unset and their
    fields form the payload object.
    """

    tag: ClassVar[str]
    newtype: ClassVar[str | None] = None

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.tag in data and len(data) == 1:
            payload = data[cls.tag]
            return {cls.newtype: payload} if cls.newtype else payload
        return data

    @model_serializer(mode="wrap")
    # `object`, not `Any`: pydantic may resolve this annotation from a subclass's
    # module (on a deferred build), where only builtins are sure to be in scope.
    def _wrap(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        fields = handler(self)
        return {self.tag: fields[self.newtype] if self.newtype else fields}

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        reference = handler(schema)
        resolved = handler.resolve_ref_schema(reference)
        fields = dict(resolved)
        payload = fields["properties"][cls.newtype] if cls.newtype else fields
        resolved.clear()
        resolved.update(
            {
                "title": cls.__name__,
                "type": "object",
                "properties": {cls.tag: payload},
                "required": [cls.tag],
            }
        )
        if cls.__doc__:
            resolved["description"] = cls.__doc__.strip().splitlines()[0]
        return reference


def external_union(
    units: Iterable[str], variants: Iterable[type[ExternalVariant]], *, name: str
) -> tuple[Discriminator, BeforeValidator]:
    """Return the annotations that make a union of units and variants an external enum.

    The validator turns the accepted `{"unit": null}` form into the bare
    string; the discriminator routes a string to the unit `Literal` and a
    one-key object to the variant named by its key, so errors name the variant.
    """
    unit_names = frozenset(units)
    tags = {variant: variant.tag for variant in variants}
    tag_names = frozenset(tags.values())

    def normalise(value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            ((key, payload),) = value.items()
            if key in unit_names and payload is None:
                return key
        return value

    def discriminate(value: Any) -> str | None:
        if isinstance(value, str):
            return UNIT
        if isinstance(value, dict):
            return next(iter(value)) if len(value) == 1 else None
        for variant, tag in tags.items():
            if isinstance(value, variant):
                return tag
        return None

    message = (
        f"{name} is one of the strings {', '.join(sorted(unit_names))} "
        f"or a one-key object keyed by {', '.join(sorted(tag_names))}"
    )
    # The discriminator must wrap the union itself; the validator runs before it.
    discriminator = Discriminator(
        discriminate, custom_error_type=f"invalid_{name}", custom_error_message=message
    )
    return discriminator, BeforeValidator(normalise)
