"""A tool made `sequential` runs alone: an answer calling it has its calls run one by one."""

from __future__ import annotations

import asyncio

import pytest

from neuron_tool import ToolRegistrationError, ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.neuron_tool.shaped import ShapedTool

from .support import ask


class Overlap:
    """Counts the calls running at once; each yields to the others while it runs."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.order: list[str] = []

    async def visit(self, name: str) -> str:
        self.running += 1
        self.most = max(self.most, self.running)
        self.order.append(f"{name}+")
        for _ in range(3):  # hand the loop to any other call running beside this one
            await asyncio.sleep(0)
        self.order.append(f"{name}-")
        self.running -= 1
        return name


def tools(overlap: Overlap, *, sequential: bool) -> list[object]:
    @tool(sequential=sequential)
    async def write_file(path: str) -> str:
        """Write a file."""
        return await overlap.visit(f"write {path}")

    @tool
    async def read_file(path: str) -> str:
        """Read a file."""
        return await overlap.visit(f"read {path}")

    return [write_file, read_file]


def answer_calling(*names: str) -> list[object]:
    calls = [ToolUsePart(f"c{i}", name, {"path": "a"}) for i, name in enumerate(names)]
    return [tool_call_response(*calls), text_response("done")]


async def run(overlap: Overlap, *names: str, sequential: bool) -> ScriptedProvider:
    provider = ScriptedProvider(answer_calling(*names))
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry(tools(overlap, sequential=sequential)),
        config=NeuronTurnConfig(model="m"),
    )
    output = await turn.execute(ask("go"))
    assert output.exit_reason == "complete"
    return provider


async def test_an_answer_calling_a_sequential_tool_runs_its_calls_one_by_one_in_order() -> None:
    overlap = Overlap()

    await run(overlap, "read_file", "write_file", "read_file", sequential=True)

    assert overlap.most == 1
    assert overlap.order == [
        "read a+", "read a-", "write a+", "write a-", "read a+", "read a-",
    ]  # fmt: skip


async def test_without_a_sequential_tool_the_calls_still_run_together() -> None:
    overlap = Overlap()

    await run(overlap, "read_file", "write_file", "read_file", sequential=False)

    assert overlap.most == 3


async def test_an_answer_not_calling_the_sequential_tool_runs_its_calls_together() -> None:
    overlap = Overlap()

    await run(overlap, "read_file", "read_file", sequential=True)

    assert overlap.most == 2


async def test_results_keep_the_models_order_either_way() -> None:
    for sequential in (True, False):
        provider = await run(Overlap(), "write_file", "read_file", sequential=sequential)
        results = provider.requests[1].messages[-1].content
        assert [getattr(r, "content", None) for r in results] == ["write a", "read a"]


def test_the_registry_keeps_the_sequential_tools_names_up_to_date() -> None:
    registry = ToolRegistry(tools(Overlap(), sequential=True))
    assert registry.sequential_names == {"write_file"}
    assert registry.with_tools([]).sequential_names == {"write_file"}
    registry.unregister("write_file")
    assert registry.sequential_names == frozenset()


def test_a_tool_whose_sequential_is_not_a_bool_is_refused_at_registration() -> None:
    with pytest.raises(ToolRegistrationError, match="sequential must be True or False"):
        ToolRegistry([ShapedTool(sequential="yes")])
