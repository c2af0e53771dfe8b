"""Which images a turn's page shows inline, and how the others are named instead."""

from __future__ import annotations

import base64
import re

import pytest
from pydantic import JsonValue

from layer0 import Base64Source, UrlSource
from neuron_turn import DocumentPart, ImagePart, ProviderMessage, TextPart, ToolResultPart
from neuron_turn.loop._convert import history_to_json
from neuron_turn.viewer._images import MAX_IMAGE_BYTES, MAX_PAGE_BYTES, ImageAllowance
from neuron_turn.viewer._text import TextAllowance
from neuron_turn.viewer.guard import SECURITY_HEADERS
from neuron_turn.viewer.pages import _message

from .pngs import solid_png

PNG = solid_png(3, 2, (255, 0, 255))
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 16
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + b"\x00" * 16
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L" + b"\x00" * 16
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'


def image(media_type: str, data: bytes | str) -> JsonValue:
    """An image block as stored history holds it; `data` bytes are base64-encoded."""
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    return {
        "type": "image",
        "source": {"type": "base64", "data": encoded},
        "media_type": media_type,
    }


def shown(*blocks: JsonValue, allowance: ImageAllowance | None = None) -> str:
    """A user message holding `blocks`, as a turn's page shows it."""
    return _message(
        {"role": "user", "content": list(blocks)}, allowance or ImageAllowance(), TextAllowance("t")
    )


def inlined(page: str) -> list[tuple[str, str]]:
    """The (media type, base64) of each `<img>` on `page`."""
    return re.findall(r'<img src="data:([\w/]+);base64,([A-Za-z0-9+/=]+)"', page)


@pytest.mark.parametrize(
    ("media_type", "data"),
    [("image/png", PNG), ("image/jpeg", JPEG), ("image/gif", GIF), ("image/webp", WEBP)],
)
def test_each_raster_type_a_browser_renders_safely_is_inlined_with_its_caption(
    media_type: str, data: bytes
) -> None:
    page = shown(image(media_type, data))
    assert inlined(page) == [(media_type, base64.b64encode(data).decode())]
    assert f'alt="image ({media_type})"' in page
    assert f"<figcaption>[image {media_type}] {len(data)} B</figcaption>" in page


def test_an_svg_is_named_never_inlined_even_as_data() -> None:
    page = shown(image("image/svg+xml", SVG))
    assert page == '<div class="msg"><b>user</b><pre>[image image/svg+xml]</pre></div>'


@pytest.mark.parametrize(
    "media_type",
    ["image/bmp", "image/x-icon", "IMAGE/PNG", "image/png; charset=utf-8", " image/png", "png"],
)
def test_an_unknown_type_or_one_with_parameters_or_odd_characters_is_named(
    media_type: str,
) -> None:
    page = shown(image(media_type, PNG))
    assert "<img" not in page and base64.b64encode(PNG).decode() not in page
    assert "<pre>[image " in page


@pytest.mark.parametrize(
    ("media_type", "data"),
    [
        ("image/png", JPEG),
        ("image/jpeg", PNG),
        ("image/gif", b"GIF90a" + b"\x00" * 16),
        ("image/webp", b"RIFF\x1a\x00\x00\x00WAVEfmt " + b"\x00" * 16),
        ("image/png", SVG),
        ("image/png", b""),
    ],
)
def test_bytes_whose_signature_is_not_their_media_types_are_named(
    media_type: str, data: bytes
) -> None:
    page = shown(image(media_type, data))
    assert page == f'<div class="msg"><b>user</b><pre>[image {media_type}]</pre></div>'


@pytest.mark.parametrize(
    "data",
    [
        base64.b64encode(PNG).decode()[:-2],  # padding cut
        base64.b64encode(PNG).decode() + "\n",
        base64.encodebytes(PNG * 30).decode(),  # line breaks every 76 characters
        base64.urlsafe_b64encode(PNG + b"\xfb\xff").decode(),  # - and _ for + and /
        "iVBORw0KGgo=" + '" onerror="alert(1)',
        "not base64!",
    ],
)
def test_data_that_is_not_strict_base64_is_named(data: str) -> None:
    page = shown(image("image/png", data))
    assert page == '<div class="msg"><b>user</b><pre>[image image/png]</pre></div>'


def test_an_image_larger_than_one_image_may_be_is_named_with_why() -> None:
    allowance = ImageAllowance(per_image=len(PNG) - 1)
    page = shown(image("image/png", PNG), allowance=allowance)
    assert "<img" not in page
    assert f"[image image/png] not shown: {len(PNG)} B, more than the {len(PNG) - 1} B" in page
    assert allowance.left == MAX_PAGE_BYTES


def test_the_images_beyond_what_one_page_inlines_are_named_with_why() -> None:
    allowance = ImageAllowance(left=len(PNG) * 2)
    svg = image("image/svg+xml", SVG)
    blocks = [image("image/png", PNG), svg, image("image/png", PNG), image("image/gif", GIF)]
    page = shown(*blocks, allowance=allowance)
    # The SVG, named, spends nothing: both PNGs fit, the GIF does not.
    assert [kind for kind, _ in inlined(page)] == ["image/png", "image/png"]
    assert "<pre>[image image/gif] not shown: the page already shows as many images" in page
    assert allowance.left == 0


def test_the_default_caps_are_5_mb_an_image_and_20_mb_a_page() -> None:
    largest = PNG + b"\x00" * (MAX_IMAGE_BYTES - len(PNG))
    one_too_many = image("image/png", largest + b"\x00")
    page = shown(one_too_many)
    assert "<img" not in page and "not shown: 5.0 MB, more than the 5.0 MB" in page
    page = shown(*[image("image/png", largest)] * 5)
    assert len(inlined(page)) == 4 == MAX_PAGE_BYTES // MAX_IMAGE_BYTES
    assert page.count("not shown: the page already shows") == 1


def test_a_hostile_media_type_cannot_leave_its_attribute_or_caption() -> None:
    hostile = 'image/png" onerror="alert(1)'
    page = shown(image(hostile, PNG), image("image/png<script>", PNG))
    assert "<img" not in page and "<script>" not in page and 'onerror="' not in page
    assert "<pre>[image image/png&quot; onerror=&quot;alert(1)]</pre>" in page
    assert "<pre>[image image/png&lt;script&gt;]</pre>" in page


def test_an_image_by_url_is_named_with_its_url_as_text_and_never_fetched() -> None:
    url = "https://images.example.com/cat.webp?a=1&b=<2>"
    block: JsonValue = {
        "type": "image",
        "source": {"type": "url", "url": url},
        "media_type": "image/webp",
    }
    long: JsonValue = {
        "type": "image",
        "source": {"type": "url", "url": "data:image/png;base64," + "A" * 10_000},
        "media_type": "image/png",
    }
    page = shown(block, long)
    assert "<img" not in page and "href" not in page
    assert "<pre>[image image/webp] https://images.example.com/cat.webp?a=1&amp;b=&lt;2&gt;" in page
    assert "(10022 characters)</pre>" in page and "A" * 1000 not in page


def test_an_image_a_model_made_is_shown_in_its_answer() -> None:
    painted = ProviderMessage(
        "assistant",
        [
            TextPart("Here is a cat."),
            ImagePart(Base64Source(data=base64.b64encode(PNG).decode()), "image/png"),
            ImagePart(UrlSource(url="https://images.example.com/cat.webp"), "image/webp"),
        ],
    )
    [stored] = history_to_json([painted])  # type: ignore[misc]
    page = _message(stored, ImageAllowance(), TextAllowance("t"))
    assert inlined(page) == [("image/png", base64.b64encode(PNG).decode())]
    assert "<pre>[image image/webp] https://images.example.com/cat.webp</pre>" in page


def test_the_images_a_tool_returned_are_shown_between_the_other_files_named() -> None:
    pdf = DocumentPart(
        Base64Source(data=base64.b64encode(b"%PDF-1.7").decode()), "application/pdf", "a.pdf"
    )
    files = (
        pdf,
        ImagePart(Base64Source(data=base64.b64encode(SVG).decode()), "image/svg+xml"),
        ImagePart(Base64Source(data=base64.b64encode(PNG).decode()), "image/png"),
        pdf,
    )
    [stored] = history_to_json([ProviderMessage("user", [ToolResultPart("t1", "ok", files=files)])])  # type: ignore[misc]
    page = _message(stored, ImageAllowance(), TextAllowance("t"))
    png = base64.b64encode(PNG).decode()
    assert re.sub(r'<figure class="image">.*?</figure>', "<figure/>", page) == (
        '<div class="msg"><b>user</b><pre>[result] ok</pre>'
        "<pre>[document a.pdf] [image image/svg+xml]</pre><figure/>"
        "<pre>[document a.pdf]</pre></div>"
    )
    assert inlined(page) == [("image/png", png)]


def test_the_content_security_policy_still_admits_only_data_images_and_inline_style() -> None:
    policy = dict(SECURITY_HEADERS)[b"content-security-policy"].decode()
    assert policy.split("; ") == [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src 'self' data:",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
