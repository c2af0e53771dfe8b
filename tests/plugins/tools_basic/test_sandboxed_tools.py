"""`shell` and `python` declare they must run isolated, and refuse to run anywhere else."""

from __future__ import annotations

import pytest

from neuron_tool import ToolIsolationError, requires_isolation
from neuron_tools_basic import calculator, python, shell


@pytest.mark.parametrize(
    ("tool", "arguments"), [(shell, {"command": "id"}), (python, {"code": "1"})]
)
async def test_outside_a_sandbox_the_tool_refuses_before_running_anything(
    tool: object, arguments: dict[str, str]
) -> None:
    assert requires_isolation(tool)
    with pytest.raises(ToolIsolationError, match="runs only inside a sandbox"):
        await tool.call(arguments)  # type: ignore[attr-defined]


def test_tools_without_the_flag_do_not_require_isolation() -> None:
    assert not requires_isolation(calculator)
