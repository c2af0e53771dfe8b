"""Documents in a message: a custom block on the layer0 wire, a DocumentPart for providers."""

from __future__ import annotations

import base64

import pytest

from layer0 import Base64Source, Content, CustomBlock, TextBlock, TurnInput, UrlSource
from neuron_turn import DOCUMENT_TYPE, DocumentPart, NeuronTurn, ProviderMessage, document_block
from neuron_turn.loop._convert import history_from_json, history_to_json
from neuron_turn.loop.tokens import estimate_tokens
from neuron_turn.testing import ScriptedProvider, text_response

from .support import appended

PDF = b"%PDF-1.7 a report"


def test_a_document_block_carries_its_bytes_or_its_url_in_a_custom_block() -> None:
    inline = document_block(PDF, name="report.pdf")
    assert inline == CustomBlock(
        content_type=DOCUMENT_TYPE,
        data={
            "source": {"type": "base64", "data": base64.b64encode(PDF).decode()},
            "media_type": "application/pdf",
            "name": "report.pdf",
        },
    )
    linked = document_block(url="https://example.com/a.pdf")
    assert linked.data == {
        "source": {"type": "url", "url": "https://example.com/a.pdf"},
        "media_type": "application/pdf",
    }


@pytest.mark.parametrize("given", [{}, {"data": PDF, "url": "https://example.com/a.pdf"}])
def test_a_document_is_given_by_its_bytes_or_its_url_not_both(given: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="by its bytes"):
        document_block(**given)  # type: ignore[arg-type]


async def test_a_document_in_the_message_reaches_the_provider_and_stays_in_the_history() -> None:
    model = ScriptedProvider([text_response("It is a report.")])
    message = Content([TextBlock(text="What is this?"), document_block(PDF, name="report.pdf")])

    output = await NeuronTurn(model).execute(
        TurnInput(message=message, trigger="user", session="s1")
    )

    sent = model.requests[0].messages[-1].content
    assert sent[1] == DocumentPart(
        Base64Source(data=base64.b64encode(PDF).decode()), "application/pdf", "report.pdf"
    )
    stored = appended(output).messages[0]
    assert stored["content"][1]["content_type"] == DOCUMENT_TYPE  # type: ignore[index,call-overload]


def test_a_document_survives_the_stored_historys_round_trip() -> None:
    part = DocumentPart(UrlSource(url="https://example.com/a.pdf"), "application/pdf", "a.pdf")
    history = [ProviderMessage("user", [part])]
    assert history_from_json(history_to_json(history))[0].content == [part]


def test_a_document_counts_by_its_size_not_by_its_base64_text() -> None:
    big = DocumentPart(Base64Source(data="A" * 400_000), "application/pdf")
    tokens = estimate_tokens([ProviderMessage("user", [big])])
    assert 30_000 < tokens < 100_000  # half its 300 KB, four characters a token
