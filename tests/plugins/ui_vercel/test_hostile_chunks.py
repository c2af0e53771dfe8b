"""Chunks of events no NeuronTurn cleaned still go out as valid UTF-8 server-sent events."""

from __future__ import annotations

import json

from neuron_ui_vercel._chunks import dumps


def test_a_lone_surrogate_in_a_chunk_is_replaced_not_fatal() -> None:
    # An orchestrator's events need not come from a NeuronTurn, which cleans its text;
    # a lone surrogate left as it is would end the response unfinished.
    sent = dumps({"type": "tool-output-available", "toolCallId": "c1", "output": "sun \ud800"})

    assert sent.startswith(b"data: ") and sent.endswith(b"\n\n")
    assert json.loads(sent[len(b"data: ") :].decode("utf-8"))["output"] == "sun \ufffd"


def test_a_chunk_of_well_formed_text_is_sent_as_it_is() -> None:
    chunk = {"type": "text-delta", "id": "t1", "delta": "héllo ☀ \U0001f600"}

    assert dumps(chunk) == b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"
