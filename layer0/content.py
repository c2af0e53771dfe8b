"""Content: plain text, or a list of typed blocks (text, image, tool use, …)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import ConfigDict, Discriminator, Field, RootModel, Tag

from ._scalars import StrictBool
from ._tagged import Frozen
from .json_value import Json

__all__ = [
    "Base64Source",
    "Content",
    "ContentBlock",
    "CustomBlock",
    "ImageBlock",
    "ImageSource",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UrlSource",
]


class Base64Source(Frozen):
    """Image bytes inline, base64-encoded."""

    type: Literal["base64"] = "base64"
    data: str


class UrlSource(Frozen):
    """An image the model fetches from a URL."""

    type: Literal["url"] = "url"
    url: str


ImageSource: TypeAlias = Annotated[Base64Source | UrlSource, Field(discriminator="type")]
"""Where an image's bytes come from; tagged by `"type"`."""


class TextBlock(Frozen):
    """A block of plain text."""

    type: Literal["text"] = "text"
    text: str


class ImageBlock(Frozen):
    """An image, inline or by URL."""

    type: Literal["image"] = "image"
    source: ImageSource
    media_type: str


class ToolUseBlock(Frozen):
    """The model asking for a tool call."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: Json


class ToolResultBlock(Frozen):
    """The result of a tool call, sent back to the model."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: StrictBool


class CustomBlock(Frozen):
    """Content of a kind layer0 does not name (audio, a provider's own block)."""

    type: Literal["custom"] = "custom"
    content_type: str
    data: Json


ContentBlock: TypeAlias = Annotated[
    TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | CustomBlock,
    Field(discriminator="type"),
]
"""One block of content; tagged by `"type"`."""


def _content_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "blocks"
    return None


_ContentRoot: TypeAlias = Annotated[
    Annotated[str, Tag("text")] | Annotated[list[ContentBlock], Tag("blocks")],
    Discriminator(
        _content_kind,
        custom_error_type="invalid_content",
        custom_error_message="content is a string or an array of content blocks",
    ),
]

if TYPE_CHECKING:
    _ContentModel: TypeAlias = RootModel[_ContentRoot]
else:
    # Unparametrised at run time: `RootModel[...]` would build its validator at import,
    # where `Content` defers it to first use like every other layer0 model.
    _ContentModel = RootModel


class Content(_ContentModel):
    """A message body: a JSON string (plain text) or a JSON array of blocks."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    root: _ContentRoot

    def as_text(self) -> str | None:
        """Return the text itself, or the first text block's text, or None."""
        if isinstance(self.root, str):
            return self.root
        for block in self.root:
            if isinstance(block, TextBlock):
                return block.text
        return None

    @property
    def blocks(self) -> list[ContentBlock]:
        """The content as blocks: plain text becomes one text block."""
        if isinstance(self.root, str):
            return [TextBlock(text=self.root)]
        return list(self.root)
