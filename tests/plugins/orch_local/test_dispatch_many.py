from __future__ import annotations

import asyncio

from layer0 import AgentNotFound, DispatchFailed, TurnOutput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator

from ._doubles import GatedTurn, user


async def test_results_come_back_in_input_order() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    results = await orchestrator.dispatch_many([("echo", user(str(n))) for n in range(20)])
    assert [r.message.as_text() for r in results if isinstance(r, TurnOutput)] == [
        str(n) for n in range(20)
    ]


async def test_no_tasks_give_no_results() -> None:
    orchestrator = LocalOrchestrator({"echo": EchoTurn()}, InMemoryStore())
    assert await orchestrator.dispatch_many([]) == []


async def test_failures_are_returned_in_place_and_do_not_cancel_the_others() -> None:
    gated = GatedTurn(fail=["boom"])
    orchestrator = LocalOrchestrator({"g": gated}, InMemoryStore(), max_concurrency=4)
    tasks = [("g", user("one")), ("g", user("boom")), ("nobody", user("x")), ("g", user("two"))]
    running = asyncio.create_task(orchestrator.dispatch_many(tasks))
    # "boom" and "nobody" fail at once while "one" and "two" are still held at their gates.
    assert {await gated.entered.get(), await gated.entered.get()} == {"one", "two"}
    gated.release("one")
    gated.release("two")
    results = await running
    assert isinstance(results[0], TurnOutput) and results[0].message.as_text() == "answer to one"
    assert isinstance(results[1], DispatchFailed)
    assert isinstance(results[1].__cause__, RuntimeError)
    assert isinstance(results[2], AgentNotFound) and results[2].agent == "nobody"
    assert isinstance(results[3], TurnOutput) and results[3].message.as_text() == "answer to two"


async def test_at_most_max_concurrency_dispatches_run_at_once() -> None:
    gated = GatedTurn()
    orchestrator = LocalOrchestrator({"g": gated}, InMemoryStore(), max_concurrency=2)
    texts = [f"t{n}" for n in range(6)]
    running = asyncio.create_task(orchestrator.dispatch_many([("g", user(t)) for t in texts]))
    # Hold two at their gates before releasing any: without the bound all six
    # would have entered by now, and the peak would say so.
    held = [await gated.entered.get(), await gated.entered.get()]
    assert gated.active == 2
    finished = 0
    while finished < len(texts):
        gated.release(held.pop(0))
        finished += 1
        if finished + len(held) < len(texts):
            held.append(await gated.entered.get())
    results = await running
    assert gated.peak == 2
    assert [r.message.as_text() for r in results if isinstance(r, TurnOutput)] == [
        f"answer to {t}" for t in texts
    ]
