"""How the viewer's pages show a message's blocks: images and documents named, never dumped."""

from __future__ import annotations

import base64

from layer0 import Base64Source, Content, ImageBlock, TextBlock
from neuron_turn import document_block
from neuron_turn.viewer.pages import _message


def test_images_and_documents_are_named_and_their_bytes_never_shown() -> None:
    secret = base64.b64encode(b"%PDF-1.7 the secret plan").decode()
    content = Content(
        [
            TextBlock(text="Read these."),
            document_block(base64.b64decode(secret), name="plan<1>.pdf"),
            ImageBlock(source=Base64Source(data="iVBORw0KGgo="), media_type="image/png"),
        ]
    )
    shown = _message({"role": "user", "content": content.model_dump(mode="json")})
    assert "<pre>[document plan&lt;1&gt;.pdf]</pre>" in shown
    assert "<pre>[image image/png]</pre>" in shown
    assert secret not in shown and "iVBORw0KGgo" not in shown
