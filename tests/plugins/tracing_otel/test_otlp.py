"""`NEURON_OTEL=1` in a real process: its spans and metrics reach an OTLP/HTTP receiver."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Mapping

from .receiver import Received, otlp_receiver

# What an application does: build turns from plugins (which turns tracing on when
# NEURON_OTEL says so) and run them; the spans are flushed when the process exits.
_PROGRAM = """
import asyncio

from layer0 import TurnInput, usd
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart, get_plugin_manager
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


@tool
async def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


async def main() -> None:
    get_plugin_manager()  # loads the plugins, as NeuronTurn.from_plugins does
    model = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "add", {"a": 1, "b": 2}),
                ToolUsePart("c2", "add", {"a": 3, "b": 4}),
                cost=usd("0.5"),
            ),
            text_response("3 and 7", cost=usd("0.25")),
        ]
    )
    config = NeuronTurnConfig(agent="adder", model="m-1")
    turn = NeuronTurn(model, tools=ToolRegistry([add]), config=config)
    await turn.execute(TurnInput(message="1+2, 3+4?", trigger="user", session="s-7"))


asyncio.run(main())
"""


def _run(received: Received, **extra: str) -> subprocess.CompletedProcess[str]:
    environ: Mapping[str, str] = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "NEURON_OTEL"))},
        "NEURON_OTEL": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": received.url,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{received.token}",
        "OTEL_SERVICE_NAME": "adder-service",
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM],
        env=dict(environ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_spans_arrive_over_otlp_http_with_the_structure_of_the_turn() -> None:
    with otlp_receiver(secrets.token_urlsafe()) as received:
        done = _run(received)

    assert done.returncode == 0, done.stderr
    assert received.refused == 0
    spans = received.spans
    (agent,) = [s for s in spans if not s.parent_span_id]
    assert agent.name == "invoke_agent adder"
    assert agent.service == "adder-service"
    assert agent.attributes["gen_ai.conversation.id"] == "s-7"
    assert agent.attributes["neuron.cost.usd"] == 0.75
    children = [s for s in spans if s.parent_span_id]
    assert sorted(s.name for s in children) == [
        "chat m-1",
        "chat m-1",
        "execute_tool add",
        "execute_tool add",
    ]
    assert {s.parent_span_id for s in children} == {agent.span_id}
    assert {s.trace_id for s in spans} == {agent.trace_id}
    calls = sorted(str(s.attributes["gen_ai.tool.call.id"]) for s in children if "tool" in s.name)
    assert calls == ["c1", "c2"]
    assert not any("gen_ai.input.messages" in s.attributes for s in spans)
    durations = [p for p in received.points if p.metric == "gen_ai.client.operation.duration"]
    assert durations[-1].count == 2
    assert durations[-1].service == "adder-service"
    assert "gen_ai.conversation.id" not in durations[-1].attributes


def test_a_receiver_refusing_the_token_gets_nothing_through() -> None:
    with otlp_receiver(secrets.token_urlsafe()) as received:
        done = _run(received, OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20wrong")

    assert done.returncode == 0, done.stderr
    assert (received.spans, received.points) == ([], [])
    assert received.refused >= 2  # spans and metrics alike


def test_without_neuron_otel_nothing_is_sent() -> None:
    with otlp_receiver(secrets.token_urlsafe()) as received:
        done = _run(received, NEURON_OTEL="0")

    assert done.returncode == 0, done.stderr
    assert (received.spans, received.points, received.refused) == ([], [], 0)
