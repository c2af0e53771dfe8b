"""Loop overhead: one JSON line per scenario (CPU and wall µs per run, peak RSS).

Run with `python bench/loop.py`. The provider answers instantly, so what is
measured is the loop itself: request building, hooks, tool validation and
execution, records and the output. A no-op hook listens at every point so
hook dispatch is on, as in a real agent.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

from layer0 import Continue, HookAction, HookContext, HookPoint, TurnInput, TurnOutput, usd
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider

USAGE = TokenUsage(10, 5)
_PONG = TextPart("pong")
_DONE = TextPart("done:55")


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def _noop(ctx: HookContext) -> HookAction:
    return Continue()


def _hooks() -> HookRegistry:
    hooks = HookRegistry()
    hooks.add(FunctionHook(_noop, points=list(HookPoint), name="noop"))
    return hooks


def _single(request: ProviderRequest) -> ProviderResponse:
    return ProviderResponse(content=(_PONG,), stop_reason="end_turn", usage=USAGE, cost=usd())


def _tools10(request: ProviderRequest) -> ProviderResponse:
    n = sum(1 for m in request.messages for p in m.content if isinstance(p, ToolResultPart))
    if n < 10:
        part = ToolUsePart(f"call_{n}", "add", {"a": n, "b": 1})
        return ProviderResponse(content=(part,), stop_reason="tool_use", usage=USAGE, cost=usd())
    return ProviderResponse(content=(_DONE,), stop_reason="end_turn", usage=USAGE, cost=usd())


def _turn(respond: Callable[[ProviderRequest], ProviderResponse]) -> NeuronTurn:
    # 11 model calls in S2: above the default limit of 10 turns.
    config = NeuronTurnConfig(max_turns=20)
    return NeuronTurn(
        FunctionProvider(respond), tools=ToolRegistry([add]), hooks=_hooks(), config=config
    )


def _check_tools10(output: TurnOutput) -> None:
    metadata = output.metadata
    assert output.message.as_text() == "done:55", output.message
    assert (metadata.tokens_in, metadata.tokens_out) == (110, 55), metadata
    assert len(metadata.tools_called) == 10


async def _timed(runs: int, once: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    await once()  # warm caches (schemas, validators) before timing
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    for _ in range(runs):
        await once()
    return (time.process_time_ns() - cpu) / runs / 1000, (
        time.perf_counter_ns() - wall
    ) / runs / 1000


def _line(scenario: str, runs: int, cpu_us: float, wall_us: float, **extra: object) -> None:
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = {"scenario": scenario, "runs": runs, "cpu_us_per_run": round(cpu_us, 1)}
    row |= {"wall_us_per_run": round(wall_us, 1), "peak_rss_mb": round(peak_rss_mb, 1), **extra}
    print(json.dumps(row), flush=True)


async def single() -> None:
    turn = _turn(_single)
    cpu, wall = await _timed(2000, lambda: turn.execute(TurnInput(message="ping", trigger="user")))
    _line("single", 2000, cpu, wall)


async def tools10() -> None:
    turn = _turn(_tools10)

    async def once() -> None:
        _check_tools10(await turn.execute(TurnInput(message="add", trigger="user")))

    cpu, wall = await _timed(300, once)
    _line("tools10", 300, cpu, wall, cpu_us_per_iteration=round(cpu / 11, 1))


async def concurrent() -> None:
    turn = _turn(_tools10)

    async def many() -> None:
        outputs = await asyncio.gather(
            *(turn.execute(TurnInput(message="add", trigger="user")) for _ in range(200))
        )
        for output in outputs:
            _check_tools10(output)

    cpu, wall = await _timed(1, many)
    _line("concurrent", 200, cpu, wall)


_IMPORT = "import time; t = time.perf_counter(); import neuron_turn; print(time.perf_counter() - t)"


def import_time() -> None:
    samples = []
    for _ in range(7):
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout) * 1_000_000)
    median = statistics.median(samples)
    print(
        json.dumps({"scenario": "import", "runs": 7, "wall_us_median": round(median)}), flush=True
    )


def main() -> None:
    """Run every scenario and print one JSON line each."""
    asyncio.run(single())
    asyncio.run(tools10())
    asyncio.run(concurrent())
    import_time()


if __name__ == "__main__":
    main()
