"""Large payloads kept out of Temporal's history, in a directory every process shares.

A turn's images and documents pass 2 MiB easily: with `directory_storage`,
they go through a worker whole, and the history holds references only.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import (
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, Content, ImageBlock, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import (
    DirectoryPayloadDriver,
    PayloadTooLargeError,
    StoredPayloadCorruptError,
    StoredPayloadMissingError,
    data_converter,
    directory_storage,
)
from neuron_tool import ToolRegistry, ToolReturn, image_block, tool
from neuron_turn import (
    ImagePart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from .conftest import HUNG, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

BIG_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 12_000  # 3 MB, past any payload


def _client_keeping_payloads_in(env: WorkflowEnvironment, directory: Path) -> Client:
    return Client(
        env.client.service_client,
        namespace=env.client.namespace,
        data_converter=data_converter(directory_storage(directory)),
    )


@tool
async def scan(page: str) -> ToolReturn:
    """Scan a page."""
    return ToolReturn(f"scanned {page}", files=[image_block(BIG_PNG)])


def _scanner(store: InMemoryStore, answer: str) -> tuple[ScriptedProvider, NeuronTurn]:
    """A turn that calls `scan` once, then answers `answer`; and its model."""
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "scan", {"page": "1"})), text_response(answer)]
    )
    turn = NeuronTurn(
        model, tools=ToolRegistry([scan]), state=store, config=NeuronTurnConfig(model="m")
    )
    return model, turn


async def test_a_tools_large_image_goes_through_a_worker_whole_and_the_history_holds_references(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    env = dev_env  # the real server refuses a payload past 2 MiB; the test server does not
    client = _client_keeping_payloads_in(env, tmp_path / "payloads")
    store = InMemoryStore()
    model, turn = _scanner(store, "A chart.")
    async with hosting(env, {"scanner": turn}, store, client=client) as orchestrator:
        request = TurnInput(message="Scan it", trigger="user", session="s-large")
        result = await orchestrator.run("scanner", request, workflow_id="large-1")
        history = await client.get_workflow_handle("large-1").fetch_history()

    assert result.output.message.root == "A chart."
    assert base64.b64encode(BIG_PNG).decode() in result.output.model_dump_json()
    (sent,) = model.requests[1].messages[-1].content
    assert isinstance(sent, ToolResultPart) and isinstance(sent.files[0], ImagePart)
    # Byte for byte, through the activity and back.
    assert base64.b64decode(sent.files[0].source.data) == BIG_PNG  # type: ignore[union-attr]
    stored = await store.read(SessionScope(id="s-large"), HISTORY_KEY)
    assert base64.b64encode(BIG_PNG).decode() in str(stored)
    # The output went to the directory; the history carries a reference to it.
    assert len(history.to_json()) < 1_000_000
    kept = [p for p in (tmp_path / "payloads").rglob("*") if p.is_file()]
    assert kept and max(p.stat().st_size for p in kept) > len(BIG_PNG)
    assert all(not p.name.startswith(".incoming-") for p in kept)


def _image_input(session: str) -> TurnInput:
    data = base64.b64encode(BIG_PNG).decode()
    image = ImageBlock.model_validate(
        {"source": {"type": "base64", "data": data}, "media_type": "image/png"}
    )
    return TurnInput(message=Content([image]), trigger="user", session=session)


async def test_a_large_input_is_refused_naming_it_and_the_fix_when_payloads_are_inline(
    dev_env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider([text_response("A chart.")])
    turn = NeuronTurn(model, state=store, config=NeuronTurnConfig(model="m"))
    async with hosting(dev_env, {"viewer": turn}, store) as orchestrator:
        with pytest.raises(PayloadTooLargeError) as refused:
            await orchestrator.run("viewer", _image_input("s-in"), workflow_id="large-in-1")

    assert refused.value.part == "input" and refused.value.agent == "viewer"
    message = str(refused.value)
    assert "agent 'viewer': the turn's input" in message and "--payload-dir" in message
    assert model.requests == []


async def test_a_large_input_reaches_the_model_whole_when_payloads_are_kept_in_a_directory(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client = _client_keeping_payloads_in(dev_env, tmp_path / "payloads")
    store = InMemoryStore()
    model = ScriptedProvider([text_response("A chart.")])
    turn = NeuronTurn(model, state=store, config=NeuronTurnConfig(model="m"))
    async with hosting(dev_env, {"viewer": turn}, store, client=client) as orchestrator:
        await orchestrator.run("viewer", _image_input("s-in-2"), workflow_id="large-in-2")

    (image,) = model.requests[0].messages[-1].content
    assert isinstance(image, ImagePart)
    assert base64.b64decode(image.source.data) == BIG_PNG  # type: ignore[union-attr]


async def test_a_result_whose_payload_file_is_gone_fails_naming_the_directory(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    directory = tmp_path / "payloads"
    client = _client_keeping_payloads_in(dev_env, directory)
    store = InMemoryStore()
    _, turn = _scanner(store, "Done.")
    async with hosting(dev_env, {"scanner": turn}, store, client=client) as orchestrator:
        request = TurnInput(message="Scan it", trigger="user", session="s-gone")
        await orchestrator.run("scanner", request, workflow_id="large-gone")
        for kept in directory.rglob("*"):
            if kept.is_file():
                kept.unlink()
        with pytest.raises(StoredPayloadMissingError) as missing:
            await orchestrator.result("large-gone")

    assert str(directory) in str(missing.value)


# The driver alone: what it writes, and what it refuses to read.


def _payload(data: bytes) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=data)


async def test_the_driver_keeps_a_payload_once_under_its_digest_private_to_this_user(
    tmp_path: Path,
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    payload = _payload(b'"a large answer"')
    first = await driver.store(StorageDriverStoreContext(), [payload, payload])
    again = await driver.store(StorageDriverStoreContext(), [payload])

    assert first[0] == first[1] == again[0]
    files = [p for p in (tmp_path / "kept").rglob("*") if p.is_file()]
    assert [f.name for f in files] == [first[0].claim_data["sha256"]]
    assert files[0].stat().st_mode & 0o077 == 0  # sessions are in it: nobody else reads them
    (back,) = await driver.retrieve(StorageDriverRetrieveContext(), first[:1])
    assert back == payload


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "", "AB" * 32, "0" * 63, "0" * 64 + "/x"]
)
async def test_the_driver_refuses_a_claim_that_names_no_digest_reading_nothing(
    tmp_path: Path, name: str
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    claim = StorageDriverClaim(claim_data={"sha256": name})

    with pytest.raises(StoredPayloadMissingError) as refused:
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])

    assert str(tmp_path / "kept") in str(refused.value)


async def test_the_driver_refuses_a_file_whose_bytes_do_not_match_its_digest(
    tmp_path: Path,
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    (claim,) = await driver.store(StorageDriverStoreContext(), [_payload(b'"the answer"')])
    (kept,) = [p for p in (tmp_path / "kept").rglob("*") if p.is_file()]
    kept.write_bytes(kept.read_bytes().replace(b"answer", b"ANSWER"))

    with pytest.raises(StoredPayloadCorruptError) as damaged:
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])

    assert str(kept) in str(damaged.value) and "do not match" in str(damaged.value)


async def test_directory_storage_keeps_only_payloads_from_its_threshold_up(tmp_path: Path) -> None:
    storage = directory_storage(tmp_path / "kept", threshold=100)
    converter = data_converter(storage)
    small, large = await converter.encode(["x" * 10, "y" * 200])

    assert small.data == b'"' + b"x" * 10 + b'"'
    assert b"y" * 200 not in large.SerializeToString()
    assert await converter.decode([small, large], [str, str]) == ["x" * 10, "y" * 200]
    assert (tmp_path / "kept").stat().st_mode & 0o077 == 0


async def test_an_attempt_lost_after_a_large_tool_result_goes_on_from_its_checkpoint(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client = _client_keeping_payloads_in(dev_env, tmp_path / "payloads")
    store, stalled, ran = InMemoryStore(), asyncio.Event(), []

    @tool
    async def photograph(page: str) -> ToolReturn:
        """Photograph a page."""
        ran.append(page)
        return ToolReturn("photographed", files=[image_block(BIG_PNG)])

    async def respond(request: ProviderRequest) -> ProviderResponse:
        if len(request.messages) == 1:
            return tool_call_response(ToolUsePart("c1", "photograph", {"page": "1"}))
        if not stalled.is_set():
            stalled.set()
            await asyncio.Event().wait()  # until the attempt is given up
        return text_response("A page.")

    turn = NeuronTurn(
        FunctionProvider(respond),
        tools=ToolRegistry([photograph]),
        state=store,
        config=NeuronTurnConfig(model="fn"),
    )
    async with hosting(dev_env, {"camera": turn}, store, client=client, policy=HUNG) as orch:
        request = TurnInput(message="Photograph it", trigger="user", session="s-lost")
        output = await orch.dispatch("camera", request, workflow_id="large-lost")

    assert stalled.is_set() and output.message.as_text() == "A page."
    # Its 4 MB checkpoint was heartbeated, kept in the directory: the tool ran once.
    assert ran == ["1"]


async def test_storing_a_payload_again_writes_its_damaged_file_anew(tmp_path: Path) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    payload = _payload(b'"the answer"')
    (claim,) = await driver.store(StorageDriverStoreContext(), [payload])
    (kept,) = [p for p in (tmp_path / "kept").rglob("*") if p.is_file()]
    kept.write_bytes(kept.read_bytes().replace(b"answer", b"ANSWER"))  # same size, other bytes

    # A retried activity, or the next heartbeat, stores the same payload again.
    assert await driver.store(StorageDriverStoreContext(), [payload]) == [claim]
    (back,) = await driver.retrieve(StorageDriverRetrieveContext(), [claim])

    assert back == payload
