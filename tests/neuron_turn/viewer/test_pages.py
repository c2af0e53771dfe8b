"""How the viewer's pages show a message's blocks (images: test_images): named, never dumped."""

from __future__ import annotations

import base64

from pydantic import JsonValue

from layer0 import Base64Source, Content, ImageBlock, TextBlock
from neuron_turn import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    document_block,
)
from neuron_turn.loop._convert import RAW_TYPE, THINKING_TYPE, TOOL_FILES_TYPE, history_to_json
from neuron_turn.viewer._images import ImageAllowance
from neuron_turn.viewer._text import TextAllowance
from neuron_turn.viewer.pages import _message


def test_documents_and_images_not_shown_are_named_and_their_bytes_never_dumped() -> None:
    secret = base64.b64encode(b"%PDF-1.7 the secret plan").decode()
    content = Content(
        [
            TextBlock(text="Read these."),
            document_block(base64.b64decode(secret), name="plan<1>.pdf"),
            ImageBlock(source=Base64Source(data="iVBORw0KGgo="), media_type="image/svg+xml"),
        ]
    )
    shown = _message(
        {"role": "user", "content": content.model_dump(mode="json")},
        ImageAllowance(),
        TextAllowance("t"),
    )
    assert "<pre>[document plan&lt;1&gt;.pdf]</pre>" in shown
    assert "<pre>[image image/svg+xml]</pre>" in shown
    assert secret not in shown and "iVBORw0KGgo" not in shown


def test_the_files_a_tool_returned_not_shown_are_named_after_its_result_never_dumped() -> None:
    secret = base64.b64encode(b"%PDF-1.7 the secret plan").decode()
    files = (
        ImagePart(Base64Source(data="iVBORw0KGgo="), "image/svg+xml"),
        DocumentPart(Base64Source(data=secret), "application/pdf", "q3<1>.pdf"),
    )
    result = ProviderMessage("user", [ToolResultPart("t1", "Took them.", files=files)])
    stored = history_to_json([result])
    assert isinstance(stored, list)
    shown = _message(stored[0], ImageAllowance(), TextAllowance("t"))
    assert "<pre>[result] Took them.</pre>" in shown
    assert "<pre>[image image/svg+xml] [document q3&lt;1&gt;.pdf]</pre>" in shown
    assert secret not in shown and "iVBORw0KGgo" not in shown and TOOL_FILES_TYPE not in shown


def test_a_tool_files_block_that_does_not_read_is_not_dumped() -> None:
    unreadable: JsonValue = {
        "type": "custom",
        "content_type": "neuron.document",
        "data": "iVBORw0KGgo=",
    }
    blocks: list[JsonValue] = [
        {"type": "custom", "content_type": TOOL_FILES_TYPE, "data": {"files": [unreadable]}},
        {"type": "custom", "content_type": TOOL_FILES_TYPE, "data": "iVBORw0KGgo="},
    ]
    shown = _message({"role": "user", "content": blocks}, ImageAllowance(), TextAllowance("t"))
    assert "<pre>[unreadable file]</pre>" in shown
    assert "<pre>[tool files: unreadable]</pre>" in shown
    assert "iVBORw0KGgo" not in shown


def test_thinking_shows_as_its_text_and_its_signature_never() -> None:
    signature = "EqQBCkgIAhABGAIiQL" * 20
    answer = ProviderMessage(
        "assistant", [ThinkingPart("First <check> the units.", signature), TextPart("42 m")]
    )
    stored = history_to_json([answer])
    assert isinstance(stored, list)
    shown = _message(stored[0], ImageAllowance(), TextAllowance("t"))
    assert '<pre class="thinking">[thinking] First &lt;check&gt; the units.</pre>' in shown
    assert "<pre>42 m</pre>" in shown
    assert signature[:40] not in shown and THINKING_TYPE not in shown


def test_a_providers_own_part_is_labelled_by_kind_and_its_long_strings_cut() -> None:
    payload = "Ev0DCioIBhgCIiQ" * 100
    search = RawPart(
        "anthropic",
        {
            "type": "web_search_tool_result",
            "content": [{"title": "Oslo <weather>", "encrypted_content": payload}],
        },
    )
    stored = history_to_json([ProviderMessage("assistant", [search])])
    assert isinstance(stored, list)
    shown = _message(stored[0], ImageAllowance(), TextAllowance("t"))
    assert "[anthropic web_search_tool_result]" in shown
    assert "Oslo &lt;weather&gt;" in shown and f"({len(payload)} characters)" in shown
    assert payload not in shown and RAW_TYPE not in shown
