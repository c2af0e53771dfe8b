"""What A2A adds to a call: `RemoteAgent.execute` against `serve_a2a`, over loopback HTTP.

Run with `python bench/a2a_calls.py [calls]`; prints one JSON line per scenario.
(Not named `a2a.py`: run from `bench/`, it would shadow the SDK's package.)
The served agent is a `NeuronTurn` on a scripted model that answers at once,
in a `LocalOrchestrator` on an in-memory store, so the figures are the
protocol's cost: `dispatch` is that orchestrator's own dispatch (the floor),
`remote` a `RemoteAgent` call to it through `serve_a2a` (the card read once;
then per call JSON-RPC with the answer over server-sent events, the guard,
the SDK's request handler and task store). Both ends run in this process,
so the CPU figures hold client and server together; wall and process CPU
microseconds per call.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from _timing import Call, per_call_us, time_calls

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_a2a import RemoteAgent, serve_a2a
from neuron_orch_local import LocalOrchestrator
from neuron_turn import NeuronTurn, NeuronTurnConfig, ProviderRequest, ProviderResponse
from neuron_turn.testing import FunctionProvider, text_response

DEFAULT_CALLS = 300
WARMUP_CALLS = 30
TOKEN = "bench-token-0123456789abcdef"
QUESTION = TurnInput(message="ping", trigger="user")


async def _pong(request: ProviderRequest) -> ProviderResponse:
    return text_response("pong")


def _orchestrator() -> LocalOrchestrator:
    store = InMemoryStore()
    turn = NeuronTurn(FunctionProvider(_pong), state=store, config=NeuronTurnConfig(model="m"))
    return LocalOrchestrator({"helper": turn}, store)


async def _timed(scenario: str, call: Call, calls: int) -> dict[str, Any]:
    wall, cpu = await time_calls(call, calls, WARMUP_CALLS)
    return {
        "scenario": scenario,
        "us_per_call": per_call_us(wall, calls, 1),
        "cpu_us_per_call": per_call_us(cpu, calls, 1),
        "calls": calls,
    }


async def _remote(calls: int) -> dict[str, Any]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_a2a(
            _orchestrator(),
            "helper",
            card_name="Helper",
            description="Answers ping.",
            port=0,
            token=TOKEN,
            on_ready=ready.set_result,
        )
    )
    try:
        url = await ready
        async with RemoteAgent(url, token=TOKEN) as remote:
            return await _timed("remote", lambda: remote.execute(QUESTION), calls)
    finally:
        server.cancel()
        await asyncio.wait([server])


async def main(calls: int) -> None:
    orchestrator = _orchestrator()
    results = [
        await _timed("dispatch", lambda: orchestrator.dispatch("helper", QUESTION), calls),
        await _remote(calls),
    ]
    for result in results:
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS))
