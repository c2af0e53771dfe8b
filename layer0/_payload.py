"""A model that travels as the data of a `custom` effect of one type.

The history append and the turn timeline are both carried so: the effect
is what crosses the wire, the model is how each side reads it.
"""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import ValidationError

from ._tagged import Frozen
from .effect import CustomEffect

__all__ = ["EffectPayload"]


class EffectPayload(Frozen):
    """The data of a `custom` effect whose `effect_type` is the class's `EFFECT_TYPE`."""

    EFFECT_TYPE: ClassVar[str]

    def effect(self) -> CustomEffect:
        """Return the custom effect that carries this."""
        return CustomEffect(effect_type=self.EFFECT_TYPE, data=self.model_dump(mode="json"))

    @classmethod
    def from_effect(cls, effect: CustomEffect) -> Self:
        """Read what a custom effect of this type carries.

        Raises:
            ValueError: `effect` is another custom effect, or its data does not fit.
        """
        kind = cls.EFFECT_TYPE
        if effect.effect_type != kind:
            article = "an" if kind[:1] in "aeiou" else "a"
            raise ValueError(f"not {article} {kind} effect: {effect.effect_type!r}")
        try:
            return cls.model_validate(effect.data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'data'}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"malformed {kind} effect: {problems}") from None
