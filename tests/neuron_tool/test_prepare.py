"""`ToolRegistry.prepare`: each tool's `prepare` over the schemas a run would offer."""

from __future__ import annotations

from typing import Any

from neuron_tool import RunContext, ToolRegistry, ToolSchema, tool


def _context(name: str) -> RunContext[Any]:
    return RunContext(deps="plan:free", tool_name=name)


async def _free_plan_only(ctx: RunContext[Any], schema: ToolSchema) -> ToolSchema | None:
    return schema if ctx.deps == "plan:free" else None


def _paid_only(ctx: RunContext[Any], schema: ToolSchema) -> ToolSchema | None:
    return None if ctx.deps == "plan:free" else schema


@tool(prepare=_free_plan_only)
async def upgrade() -> str:
    """Upgrade the plan."""
    return "upgraded"


@tool(prepare=_paid_only)
async def export() -> str:
    """Export everything."""
    return "exported"


@tool
async def status() -> str:
    """Say how things are."""
    return "fine"


async def test_prepare_keeps_order_leaves_tools_out_and_passes_others_unchanged() -> None:
    registry = ToolRegistry([upgrade, export, status])
    outside = ToolSchema(name="write_memory", description="x", input_schema={"type": "object"})

    prepared, hidden = await registry.prepare([*registry.schemas(), outside], _context)

    assert [s.name for s in prepared] == ["upgrade", "status", "write_memory"]
    assert hidden == {"export"}
    assert prepared[1] is registry.schemas()[2] and prepared[2] is outside


def test_the_registry_knows_whether_any_tool_prepares() -> None:
    registry = ToolRegistry([status])
    assert not registry.any_prepares
    registry.register(export)
    assert registry.any_prepares
    registry.unregister("export")
    assert not registry.any_prepares


async def test_any_tool_with_a_callable_prepare_is_prepared_not_only_function_tools() -> None:
    class Listed:
        name, description = "listed", "A tool by shape."
        input_schema: dict[str, Any] = {"type": "object"}
        output_schema = annotations = None

        async def call(self, input: Any) -> str:
            return "ok"

        def prepare(self, ctx: RunContext[Any], schema: ToolSchema) -> ToolSchema | None:
            return None

    registry = ToolRegistry([Listed()])  # type: ignore[list-item]
    assert await registry.prepare(registry.schemas(), _context) == ([], frozenset({"listed"}))
