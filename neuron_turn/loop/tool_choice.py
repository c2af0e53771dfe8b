"""`ToolChoice`: whether the model may, must or must not call a tool, or which one.

The caller says `"auto"`, `"none"`, `"required"` or a tool's name (the OpenAI
Agents SDK's spelling); each provider maps the parsed value to its API's own
field (Anthropic `tool_choice {type: auto|none|any|tool}`, OpenAI
`tool_choice`, Ollama by filtering the tools it sends).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final, Literal, TypeAlias

__all__ = ["ToolChoice", "ToolChoiceMode"]

ToolChoiceMode: TypeAlias = Literal["auto", "none", "required", "tool"]
"""`auto`: the model decides; `none`: no tool call; `required`: some tool call;
`tool`: a call of the one named tool."""

_KEYWORDS: Final[dict[str, ToolChoiceMode]] = {
    "auto": "auto",
    "none": "none",
    "required": "required",
}


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """What a model call may do with the tools it is offered.

    Build one with `ToolChoice.parse("required")` or `ToolChoice.tool("search")`.
    """

    mode: ToolChoiceMode
    name: str | None = None
    """The tool to call when `mode` is `"tool"`, else None."""

    AUTO: ClassVar[ToolChoice]
    NONE: ClassVar[ToolChoice]
    REQUIRED: ClassVar[ToolChoice]

    def __post_init__(self) -> None:
        if (self.mode == "tool") != bool(self.name):
            raise ValueError("a tool choice names a tool exactly when its mode is 'tool'")

    @classmethod
    def tool(cls, name: str) -> ToolChoice:
        """Return the choice forcing a call of the tool `name`."""
        return cls("tool", name)

    @classmethod
    def parse(cls, value: str | ToolChoice) -> ToolChoice:
        """Read `"auto"`, `"none"`, `"required"` or a tool name.

        Raises:
            ValueError: `value` is empty or not a string.
        """
        if isinstance(value, ToolChoice):
            return value
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                f"tool_choice must be 'auto', 'none', 'required' or a tool name, not {value!r}"
            )
        mode = _KEYWORDS.get(value)
        return cls.tool(value) if mode is None else cls(mode)

    @property
    def forces_call(self) -> bool:
        """Whether the model must call a tool (`required`, or one named tool)."""
        return self.mode in ("required", "tool")

    def __str__(self) -> str:
        return self.name if self.name is not None else self.mode


ToolChoice.AUTO = ToolChoice("auto")
ToolChoice.NONE = ToolChoice("none")
ToolChoice.REQUIRED = ToolChoice("required")
