"""`ToolReturn`: a tool's result with images and documents, checked when it is made."""

from __future__ import annotations

import base64
from datetime import date

import pytest
from pydantic import BaseModel

from layer0 import Base64Source, CustomBlock, ImageBlock, TextBlock, UrlSource
from neuron_tool import (
    DOCUMENT_TYPE,
    FunctionTool,
    ToolFileError,
    ToolRegistry,
    ToolReturn,
    document_block,
    document_of,
    image_block,
    image_type,
    tool,
    truncate_output,
)

PNG = b"\x89PNG\r\n\x1a\n fake"


class _Chart(BaseModel):
    title: str
    day: date


def test_image_block_carries_its_bytes_as_base64_or_its_url() -> None:
    assert image_block(PNG) == ImageBlock(
        source=Base64Source(data=base64.b64encode(PNG).decode()), media_type="image/png"
    )
    linked = image_block(url="https://example.com/a.jpg", media_type="image/jpeg")
    assert linked.source == UrlSource(url="https://example.com/a.jpg")


@pytest.mark.parametrize("given", [{}, {"data": PNG, "url": "https://example.com/a.png"}])
def test_an_image_is_given_by_its_bytes_or_its_url_not_both(given: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="an image is given by its bytes"):
        image_block(**given)  # type: ignore[arg-type]


def test_document_of_reads_back_what_document_block_wrote() -> None:
    block = document_block(b"%PDF-1.7", name="q3.pdf")
    assert block.content_type == DOCUMENT_TYPE
    source, media_type, name = document_of(block.data) or (None, None, None)
    assert source == Base64Source(data=base64.b64encode(b"%PDF-1.7").decode())
    assert (media_type, name) == ("application/pdf", "q3.pdf")


@pytest.mark.parametrize(
    "data",
    [
        None,
        {"media_type": "application/pdf"},
        {"source": {"type": "base64", "data": "JVBE"}},
        {"source": {"type": "ftp", "data": "x"}, "media_type": "application/pdf"},
        {"source": {"type": "url"}, "media_type": "application/pdf"},
        {"source": {"type": "url", "url": "u"}, "media_type": "text/plain", "name": 3},
    ],
)
def test_document_of_is_none_for_data_not_of_that_shape(data: object) -> None:
    assert document_of(data) is None  # type: ignore[arg-type]


def test_a_tool_return_keeps_its_value_and_files_and_makes_the_value_json() -> None:
    image = image_block(PNG)
    returned = ToolReturn(_Chart(title="growth", day=date(2026, 11, 27)), files=[image])
    assert returned.value == {"title": "growth", "day": "2026-11-27"}
    assert returned.files == (image,)
    assert returned == ToolReturn({"title": "growth", "day": "2026-11-27"}, files=(image,))


def test_a_tool_returns_repr_never_holds_the_files_bytes() -> None:
    returned = ToolReturn("shot", files=[image_block(b"x" * 10_000)])
    assert repr(returned) == "ToolReturn(value='shot', files=<1 file(s)>)"


@pytest.mark.parametrize(
    ("file", "reason"),
    [
        (TextBlock(text="hi"), "TextBlock is not a file"),
        ("a.png", "str is not a file"),
        (CustomBlock(content_type="audio", data={}), "a custom block of 'audio' is not a file"),
        (
            CustomBlock(content_type=DOCUMENT_TYPE, data={"name": "x"}),
            "a document's data needs a source",
        ),
        (
            image_block(url="https://example.com/a.svg", media_type="image/svg+xml"),
            "an image of 'image/svg+xml': the model APIs take image/gif, image/jpeg",
        ),
        (
            ImageBlock(source=Base64Source(data="not base64!"), media_type="image/png"),
            "its base64 data does not decode",
        ),
        (
            CustomBlock(
                content_type=DOCUMENT_TYPE,
                data={"source": {"type": "base64", "data": "%%%"}, "media_type": "text/plain"},
            ),
            "its base64 data does not decode",
        ),
    ],
)
def test_a_file_that_is_not_an_image_or_a_document_is_refused_naming_it(
    file: object, reason: str
) -> None:
    with pytest.raises(ToolFileError, match="file 1 of the tool's return") as caught:
        ToolReturn("x", files=[image_block(PNG), file])  # type: ignore[list-item]
    assert reason in str(caught.value)


def test_files_by_url_are_not_fetched_or_decoded() -> None:
    returned = ToolReturn(files=[document_block(url="https://example.com/a.pdf")])
    assert returned.value == ""


async def test_a_function_tool_hands_back_its_tool_return_and_gives_no_output_schema() -> None:
    @tool
    async def screenshot(page: str) -> ToolReturn:
        """Take a screenshot of a page."""
        return ToolReturn(f"took {page}", files=[image_block(PNG)])

    assert isinstance(screenshot, FunctionTool)
    assert screenshot.output_schema is None
    returned = await ToolRegistry([screenshot]).call("screenshot", {"page": "home"})
    assert returned == ToolReturn("took home", files=[image_block(PNG)])


async def test_a_sync_tool_returning_a_bad_file_fails_its_call_naming_the_file() -> None:
    @tool
    def chart() -> ToolReturn:
        """Draw a chart."""
        return ToolReturn("drawn", files=[TextBlock(text="no")])  # type: ignore[list-item]

    with pytest.raises(ToolFileError, match="file 0 of the tool's return: TextBlock"):
        await ToolRegistry([chart]).call("chart", {})


async def test_truncation_cuts_a_tool_returns_value_and_keeps_its_files_whole() -> None:
    image = image_block(b"y" * 5_000)

    @tool
    async def read() -> ToolReturn:
        """Read a page."""
        return ToolReturn("z" * 100, files=[image])

    registry = ToolRegistry()
    registry.register(read, middleware=[truncate_output(10)])
    returned = await registry.call("read", {})
    assert isinstance(returned, ToolReturn)
    assert isinstance(returned.value, str) and returned.value.startswith("z" * 10 + "…")
    assert returned.files == (image,)


async def test_an_image_or_document_returned_alone_is_a_file_not_its_json() -> None:
    @tool
    async def photo() -> ImageBlock:
        """Take a photo."""
        return image_block(PNG)

    @tool
    def report() -> CustomBlock:
        """Fetch the report."""
        return document_block(b"%PDF-1.7", name="q3.pdf")

    registry = ToolRegistry([photo, report])
    assert photo.output_schema is None and report.output_schema is None
    assert await registry.call("photo", {}) == ToolReturn(files=[image_block(PNG)])
    fetched = await registry.call("report", {})
    assert fetched == ToolReturn(files=[document_block(b"%PDF-1.7", name="q3.pdf")])


async def test_another_custom_block_returned_alone_is_still_sent_as_its_json() -> None:
    @tool
    async def audio() -> CustomBlock:
        """Record a sound."""
        return CustomBlock(content_type="audio", data={"codec": "opus"})

    returned = await ToolRegistry([audio]).call("audio", {})
    assert returned == {"type": "custom", "content_type": "audio", "data": {"codec": "opus"}}


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b"\x89PNG\r\n\x1a\n....", "image/png"),
        (b"\xff\xd8\xff\xe0....", "image/jpeg"),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"%PDF-1.7", None),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", None),
        (b"", None),
    ],
)
def test_an_image_is_known_by_its_first_bytes_not_its_name(
    data: bytes, media_type: str | None
) -> None:
    assert image_type(data) == media_type
