"""Loop overhead: one JSON line per scenario (CPU and wall µs per run, peak RSS).

Run with `python bench/loop.py`. The provider answers instantly, so what is
measured is the loop itself: request building, hooks, tool validation and
execution, records and the output. `tools10`/`tools40` run with a no-op hook
listening at every point (hook dispatch on, as in a real agent); the `_nohooks`
variants with no hook registered. Every scenario is repeated `REPEATS` times,
interleaved with the others, and the median is printed, so a burst of load from
other processes moves one sample rather than one scenario. `bare` is a
hand-written ReAct loop with pydantic argument validation doing the same ten
steps: the floor the loop is compared with. `flat10` does a step's work with
the loop's own types in one function (request, the fake provider's answer,
accounting, the token estimate, the registry's call with its schema check and
argument model, a record and the result message; no hooks, approvals, output
types, effect tools, events or limits): what the types cost, against what the
loop's structure adds. `concurrent` runs in a fresh interpreter so its peak RSS
is that of a process doing only this; `import` and `import_turn` time `import
neuron_turn` and importing what a turn needs.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from moneyed import Money

from layer0 import (
    Continue,
    HookAction,
    HookContext,
    HookPoint,
    ToolCallRecord,
    TurnInput,
    TurnOutput,
    usd,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.tokens import RunningEstimate, TokenMeter
from neuron_turn.testing import FunctionProvider, ResponseFunction

REPEATS = 5
USAGE = TokenUsage(10, 5)
_PONG = TextPart("pong")
_DONE = TextPart("done")


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


def _steps(count: int) -> Callable[[ProviderRequest], ProviderResponse]:
    def respond(request: ProviderRequest) -> ProviderResponse:
        # user message, then one (assistant tool call, user tool result) pair per step
        n = (len(request.messages) - 1) // 2
        if n < count:
            part = ToolUsePart(f"call_{n}", "add", {"a": n, "b": 1})
            return ProviderResponse(
                content=(part,), stop_reason="tool_use", usage=USAGE, cost=usd()
            )
        return ProviderResponse(content=(_DONE,), stop_reason="end_turn", usage=USAGE, cost=usd())

    return respond


def _turn(respond: ResponseFunction, *, hooks: bool = True) -> NeuronTurn:
    config = NeuronTurnConfig(max_turns=50)
    return NeuronTurn(
        FunctionProvider(respond, record=False),
        tools=ToolRegistry([add]),
        hooks=_hooks() if hooks else None,
        config=config,
    )


def _check(output: TurnOutput, steps: int) -> None:
    metadata = output.metadata
    assert output.message.as_text() == "done", output.message
    calls = steps + 1
    assert (metadata.tokens_in, metadata.tokens_out) == (10 * calls, 5 * calls), metadata
    assert len(metadata.tools_called) == steps


class _AddArgs(pydantic.BaseModel):
    a: int
    b: int


async def _bare_add(a: int, b: int) -> int:
    return a + b


async def _bare_loop(steps: int) -> str:
    """A hand-written ReAct loop: messages list, argument model, tool call, JSON result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add"}]
    while True:
        n = (len(messages) - 1) // 2
        if n >= steps:
            return "done"
        call = {"id": f"call_{n}", "name": "add", "input": {"a": n, "b": 1}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        args = _AddArgs.model_validate(call["input"])
        result = await _bare_add(args.a, args.b)
        messages.append({"role": "tool", "id": call["id"], "content": json.dumps(result)})


async def _flat_loop(
    registry: ToolRegistry, respond: Callable[[ProviderRequest], ProviderResponse]
) -> str:
    """One `tools10` run as a single function over the loop's types (see the module doc)."""
    messages = [ProviderMessage("user", [TextPart("add")])]
    schemas = registry.schemas()
    estimate, meter = RunningEstimate(), TokenMeter()
    cost, tokens_in, tokens_out = usd(), 0, 0
    records: list[ToolCallRecord] = []
    while True:
        request = ProviderRequest(model="m", messages=tuple(messages), tools=schemas)
        response = respond(request)
        messages.append(ProviderMessage("assistant", response.content))
        tokens_in += response.usage.input_tokens
        tokens_out += response.usage.output_tokens
        assert response.cost is not None
        cost = Money(cost.amount + response.cost.amount, cost.currency)
        sent = estimate.tokens(messages, 0, len(messages) - 1)
        meter.calibrate("m", estimated=sent, reported=response.usage.input_tokens)
        if response.stop_reason == "end_turn":
            return "done"
        results: list[ToolResultPart] = []
        for call in response.content:
            assert isinstance(call, ToolUsePart)
            started = time.monotonic()
            value = await registry.call(call.name, call.input)
            duration = int((time.monotonic() - started) * 1000)
            records.append(ToolCallRecord(name=call.name, duration=duration, success=True))
            results.append(ToolResultPart(call.id, json.dumps(value)))
        messages.append(ProviderMessage("user", results))
        estimate.tokens(messages, len(messages) - 2)


async def _cpu_us(runs: int, once: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    await once()  # warm caches (schemas, validators) before timing
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    for _ in range(runs):
        await once()
    return (time.process_time_ns() - cpu) / runs / 1000, (
        time.perf_counter_ns() - wall
    ) / runs / 1000


def _scenarios() -> dict[str, tuple[int, int, Callable[[], Awaitable[object]]]]:
    """name -> (runs, model calls per run, one run)."""
    single = _turn(_single)
    made: dict[str, tuple[int, int, Callable[[], Awaitable[object]]]] = {}

    async def run_single() -> None:
        await single.execute(TurnInput(message="ping", trigger="user"))

    made["single"] = (2000, 1, run_single)
    for steps, runs in ((10, 300), (40, 75)):
        for hooks in (True, False):
            turn = _turn(_steps(steps), hooks=hooks)

            async def once(turn: NeuronTurn = turn, steps: int = steps) -> None:
                _check(await turn.execute(TurnInput(message="add", trigger="user")), steps)

            name = f"tools{steps}" + ("" if hooks else "_nohooks")
            made[name] = (runs, steps + 1, once)

    async def bare() -> None:
        assert await _bare_loop(10) == "done"

    made["bare10"] = (3000, 11, bare)
    registry, respond = ToolRegistry([add]), _steps(10)

    async def flat() -> None:
        assert await _flat_loop(registry, respond) == "done"

    made["flat10"] = (1000, 11, flat)
    return made


async def _loop_scenarios() -> None:
    scenarios = _scenarios()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in scenarios}
    for _ in range(REPEATS):
        for name, (runs, _calls, once) in scenarios.items():
            samples[name].append(await _cpu_us(runs, once))
    for name, (runs, calls, _once) in scenarios.items():
        cpu = statistics.median(sample[0] for sample in samples[name])
        wall = statistics.median(sample[1] for sample in samples[name])
        row = {"scenario": name, "runs": runs, "repeats": REPEATS}
        row |= {"cpu_us_per_run": round(cpu, 1), "wall_us_per_run": round(wall, 1)}
        if calls > 1:
            row["cpu_us_per_iteration"] = round(cpu / calls, 1)
        print(json.dumps(row), flush=True)


def _peak_rss_mb() -> float:
    # VmHWM, not ru_maxrss: a child started by fork keeps its parent's ru_maxrss.
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


class _Waiting:
    """How many model calls are waiting at once, and the most there ever were."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0


def _over_the_wire(
    respond: Callable[[ProviderRequest], ProviderResponse], waiting: _Waiting
) -> Callable[[ProviderRequest], Awaitable[ProviderResponse]]:
    """`respond` behind one event-loop turn, as a real model call waits on its socket.

    Without it the fake answers without ever suspending, so each of the "concurrent"
    runs would finish before the next starts and the peak would hold 200 outputs,
    never 200 turns in flight.
    """

    async def answer(request: ProviderRequest) -> ProviderResponse:
        waiting.now += 1
        waiting.most = max(waiting.most, waiting.now)
        await asyncio.sleep(0)
        waiting.now -= 1
        return respond(request)

    return answer


async def _concurrent() -> None:
    waiting = _Waiting()
    turn = _turn(_over_the_wire(_steps(10), waiting))
    baseline_mb = _peak_rss_mb()
    cpu = time.process_time_ns()
    outputs = await asyncio.gather(
        *(turn.execute(TurnInput(message="add", trigger="user")) for _ in range(200))
    )
    cpu_ms = (time.process_time_ns() - cpu) / 1e6
    for output in outputs:
        _check(output, 10)
    peak_mb = _peak_rss_mb()
    row = {"scenario": "concurrent", "runs": 200, "cpu_ms": round(cpu_ms, 1)}
    row |= {"rss_before_mb": round(baseline_mb, 1), "peak_rss_mb": round(peak_mb, 1)}
    row["most_calls_waiting"] = waiting.most
    print(json.dumps(row), flush=True)


def concurrent() -> None:
    """200 `tools10` runs at once with `asyncio.gather`, in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, __file__, "--concurrent"], capture_output=True, text=True, check=True
    )
    print(out.stdout, end="", flush=True)


_IMPORTS = {
    "import": "import neuron_turn",
    "import_turn": "from neuron_turn import NeuronTurn, NeuronTurnConfig",
}
_TIMED = "import time; t = time.perf_counter(); c = time.process_time(); {}; " + (
    "print(time.perf_counter() - t, time.process_time() - c)"
)


def import_time() -> None:
    """Median wall and CPU time of each import in a fresh interpreter, interleaved."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in _IMPORTS}
    for _ in range(7):
        for name, statement in _IMPORTS.items():
            out = subprocess.run(
                [sys.executable, "-c", _TIMED.format(statement)],
                capture_output=True,
                text=True,
                check=True,
            )
            wall, cpu = (float(value) * 1000 for value in out.stdout.split())
            samples[name].append((wall, cpu))
    for name, pairs in samples.items():
        row = {"scenario": name, "statement": _IMPORTS[name], "runs": len(pairs)}
        row["wall_ms_median"] = round(statistics.median(wall for wall, _ in pairs), 1)
        row["cpu_ms_median"] = round(statistics.median(cpu for _, cpu in pairs), 1)
        print(json.dumps(row), flush=True)


def main() -> None:
    """Run every scenario and print one JSON line each."""
    if sys.argv[1:] == ["--concurrent"]:
        asyncio.run(_concurrent())
        return
    asyncio.run(_loop_scenarios())
    concurrent()
    import_time()


if __name__ == "__main__":
    main()
