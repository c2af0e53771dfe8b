"""`WorkflowTable.cancel`: what may be cancelled, and what is refused."""

from __future__ import annotations

import asyncio

import pytest

from layer0 import DispatchFailed, WorkflowNotFound
from neuron_orch_local._table import WorkflowTable


async def test_a_delegations_workflow_is_refused_naming_the_one_to_cancel() -> None:
    table = WorkflowTable(max_records=10)
    table.open("parent", "lead", parent=None)
    table.open("child", "helper", parent="parent")

    with pytest.raises(DispatchFailed, match="started by workflow 'parent', in its task"):
        await table.cancel("child")
    assert table.cancelled("child") is False


async def test_a_workflow_cannot_cancel_itself_and_an_unknown_one_is_not_found() -> None:
    table = WorkflowTable(max_records=10)
    table.open("own", "lead", parent=None)  # opened in this test's task

    with pytest.raises(DispatchFailed, match="cannot cancel itself"):
        await table.cancel("own")
    with pytest.raises(WorkflowNotFound):
        await table.cancel("none")


async def test_cancel_waits_for_the_cancelled_workflow_to_finish() -> None:
    table = WorkflowTable(max_records=10)
    opened, finished = asyncio.Event(), []

    async def dispatch() -> None:
        table.open("w", "lead", parent=None)
        opened.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            finished.append(table.cancelled("w"))
            table.finish("w", error=DispatchFailed("workflow w was cancelled"))

    running = asyncio.ensure_future(dispatch())
    await opened.wait()
    assert await table.cancel("w") is True
    assert finished == [True]  # it had ended when `cancel` returned
    assert await table.cancel("w") is False
    await running
