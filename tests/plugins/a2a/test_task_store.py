"""`BoundedTaskStore`: a server keeps its finished A2A tasks within bounds, never live ones."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState, TaskStatus

from neuron_a2a import BoundedTaskStore
from neuron_turn.testing import FunctionProvider, text_response

from ._server import TOKEN, serving

HEADERS = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}


def _send(text: str) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def _rpc(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def test_a_server_keeps_only_the_newest_finished_tasks_past_its_bound() -> None:
    model = FunctionProvider(lambda request: text_response("Hello!"))
    store = BoundedTaskStore(max_finished=3)
    async with serving(model, task_store=store) as served, httpx.AsyncClient(timeout=10) as http:
        sent = [
            (await http.post(served.url + "/", json=_send(f"hi {n}"), headers=HEADERS)).json()
            for n in range(5)
        ]
        ids = [answer["result"]["task"]["id"] for answer in sent]
        listed = await http.post(
            served.url + "/", json=_rpc("ListTasks", pageSize=10), headers=HEADERS
        )
        oldest = await http.post(served.url + "/", json=_rpc("GetTask", id=ids[0]), headers=HEADERS)
        newest = await http.post(
            served.url + "/", json=_rpc("GetTask", id=ids[-1]), headers=HEADERS
        )

    assert sorted(task["id"] for task in listed.json()["result"]["tasks"]) == sorted(ids[2:])
    assert "error" in oldest.json() and "not found" in oldest.json()["error"]["message"].lower()
    assert newest.json()["result"]["id"] == ids[-1]


def _task(task_id: str, state: TaskState, text: str = "") -> Task:
    status = TaskStatus(state=state)
    return Task(id=task_id, context_id="c", status=status, metadata={"text": text})


async def test_live_tasks_are_never_dropped_and_finished_ones_keep_within_their_bytes() -> None:
    store = BoundedTaskStore(max_finished=10, max_finished_bytes=2_500)
    context = ServerCallContext()
    await store.save(_task("waiting", TaskState.TASK_STATE_INPUT_REQUIRED, "w" * 5_000), context)
    for n in range(4):
        await store.save(_task(f"done{n}", TaskState.TASK_STATE_COMPLETED, "d" * 1_000), context)

    kept = [n for n in range(4) if await store.get(f"done{n}", context) is not None]
    assert await store.get("waiting", context) is not None
    assert kept == [2, 3]


async def test_a_task_finishing_larger_than_the_bound_is_kept_until_the_next_one() -> None:
    store = BoundedTaskStore(max_finished_bytes=100)
    context = ServerCallContext()
    await store.save(_task("big", TaskState.TASK_STATE_COMPLETED, "b" * 1_000), context)
    assert await store.get("big", context) is not None  # its request reads it back

    await store.save(_task("next", TaskState.TASK_STATE_FAILED), context)
    assert await store.get("big", context) is None


def test_a_bound_below_one_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="max_finished and max_finished_bytes must be 1 or more"):
        BoundedTaskStore(max_finished=0)
