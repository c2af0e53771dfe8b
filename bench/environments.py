"""Per-turn start cost of each environment: in-process, a child process, the bubblewrap sandbox.

Run with `python bench/environments.py [turns]`; prints one JSON line per
environment. Each turn is one model call (a scripted provider in this
process, answering "pong" at once) and no tools, so the figure is the
environment's own cost: for `process` and `sandbox`, starting a Python child
(and, for `sandbox`, the namespaces and mounts), loading plugins there,
building the turn and the round trips over the channel. Wall time is what
matters here (the work is in other processes); the parent's CPU is shown too.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

from layer0 import Environment, EnvironmentSpec, TurnInput
from neuron_env_sandbox import LocalEnvironment, ProcessEnvironment, SandboxEnvironment, TurnRecipe
from neuron_hooks import HookRegistry
from neuron_turn import NeuronTurn, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.testing import FunctionProvider

DEFAULT_TURNS = 10
INPUT = TurnInput(message="ping", trigger="user")
RECIPE = TurnRecipe(model="bench:pong", effect_tools=False)


def _pong(request: ProviderRequest) -> ProviderResponse:
    return ProviderResponse(content=[TextPart("pong")], stop_reason="end_turn", model="pong")


async def _time(name: str, environment: Environment, turns: int) -> dict[str, Any]:
    await environment.run(INPUT, EnvironmentSpec())  # warm the parent's imports and caches
    walls: list[float] = []
    cpu_start = time.process_time()
    for _ in range(turns):
        start = time.perf_counter()
        output = await environment.run(INPUT, EnvironmentSpec())
        walls.append(time.perf_counter() - start)
        assert output.message.as_text() == "pong"
    cpu = (time.process_time() - cpu_start) / turns
    return {
        "scenario": name,
        "turns": turns,
        "median_ms": round(statistics.median(walls) * 1000, 2),
        "min_ms": round(min(walls) * 1000, 2),
        "parent_cpu_ms": round(cpu * 1000, 2),
    }


async def _main(turns: int) -> None:
    provider = FunctionProvider(_pong)
    local = LocalEnvironment(NeuronTurn(provider, hooks=HookRegistry()))
    environments: list[tuple[str, Environment]] = [
        ("in_process", local),
        ("process", ProcessEnvironment(RECIPE, provider=provider)),
        ("sandbox", SandboxEnvironment(RECIPE, provider=provider)),
    ]
    for name, environment in environments:
        print(json.dumps(await _time(name, environment, turns)), flush=True)


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_TURNS))
