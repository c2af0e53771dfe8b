"""Retention of the payload directory: a prune removes what no history uses, nothing else.

Files are aged by setting their modification time, as a prune reads it: no
test waits for a day to pass.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import StorageDriverRetrieveContext, StorageDriverStoreContext
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import (
    MIN_OLDER_THAN,
    DirectoryPayloadDriver,
    PayloadDirectoryError,
    RetentionTooShortError,
    StoredPayloadMissingError,
    data_converter,
    directory_storage,
    large_payloads,
    prune_payloads,
    retention,
)

from .conftest import hosting
from .test_large_payloads import _scanner

pytestmark = pytest.mark.asyncio(loop_scope="session")

WEEK = timedelta(days=7)
DAY = 86_400


def _payload(data: bytes) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=data)


async def _kept(driver: DirectoryPayloadDriver, data: bytes) -> Path:
    """Store `data` with `driver`; return its file."""
    (claim,) = await driver.store(StorageDriverStoreContext(), [_payload(data)])
    digest = claim.claim_data["sha256"]
    return driver.directory / digest[:2] / digest


def _age(path: Path, days: float) -> None:
    """Make `path` look last used `days` ago."""
    then = time.time() - days * DAY
    os.utime(path, (then, then), follow_symlinks=False)


def _files(directory: Path) -> set[Path]:
    return {p for p in directory.rglob("*") if p.is_file() or p.is_symlink()}


async def test_a_payload_unused_for_longer_than_older_than_is_removed_and_reported(
    tmp_path: Path,
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    old, recent = await _kept(driver, b'"old"'), await _kept(driver, b'"recent"')
    _age(old, 8)
    _age(recent, 6)
    size = old.stat().st_size

    report = await driver.prune(WEEK)

    assert [(f.path, f.size) for f in report.removed] == [(old, size)]
    assert report.removed_bytes == size and report.kept == 1 and not report.dry_run
    assert not old.exists() and recent.exists()


async def test_a_payload_read_recently_survives_a_prune(tmp_path: Path) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    (claim,) = await driver.store(StorageDriverStoreContext(), [_payload(b'"replayed"')])
    (kept,) = _files(tmp_path / "kept")
    _age(kept, 30)

    # A replay, or a query of a finished workflow, reads it again.
    await driver.retrieve(StorageDriverRetrieveContext(), [claim])
    report = await driver.prune(WEEK)

    assert report.removed == () and report.kept == 1
    (back,) = await driver.retrieve(StorageDriverRetrieveContext(), [claim])
    assert back == _payload(b'"replayed"')


async def test_a_payload_stored_again_recently_survives_a_prune(tmp_path: Path) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    kept = await _kept(driver, b'"the same image, sent again"')
    _age(kept, 30)

    await _kept(driver, b'"the same image, sent again"')
    report = await driver.prune(WEEK)

    assert report.removed == () and kept.exists()


async def test_files_that_are_not_payloads_survive_a_prune_whatever_their_age(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "kept"
    driver = DirectoryPayloadDriver(directory)
    payload = await _kept(driver, b'"ours"')
    shard = payload.parent
    digest = "ab" + "0" * 62
    strays = [
        directory / "notes.txt",
        directory / digest,  # named as a payload, not where the driver keeps one
        shard / "notes.txt",
        shard / ("cd" + "0" * 62),  # a payload's name in another's folder
        shard / "backup" / payload.name,
        directory / "zz" / ("zz" + "0" * 62),
        directory / "backup" / "ab" / digest,
        directory / "backup" / ".incoming-theirs",  # our prefix, not in one of our folders
    ]
    for stray in strays:
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_bytes(b"someone else's")
    link = shard / (shard.name + "f" * 62)
    link.symlink_to(directory / "notes.txt")
    for path in [*strays, link, payload]:
        _age(path, 400)

    report = await driver.prune(WEEK)

    assert [f.path for f in report.removed] == [payload]
    assert _files(directory) == {*strays, link}
    assert (shard / "backup").is_dir()


async def test_a_temporary_file_is_left_alone_while_young_and_removed_once_old(
    tmp_path: Path,
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    shard = (await _kept(driver, b'"x"')).parent
    writing, crashed = shard / ".incoming-abc123", shard / ".incoming-def456"
    writing.write_bytes(b"half a payl")  # a store writing right now
    crashed.write_bytes(b"half a payl")  # a store that died mid-write
    _age(crashed, 8)

    report = await driver.prune(WEEK)

    assert [f.path for f in report.removed] == [crashed]
    assert writing.exists() and not crashed.exists()


async def test_a_dry_run_lists_what_would_go_and_removes_nothing(tmp_path: Path) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    old = await _kept(driver, b'"old"')
    _age(old, 8)

    report = await driver.prune(WEEK, dry_run=True)

    assert report.dry_run and [f.path for f in report.removed] == [old]
    assert report.removed[0].last_used.timestamp() == pytest.approx(time.time() - 8 * DAY, abs=5)
    assert old.exists()


@pytest.mark.parametrize("older_than", [timedelta(hours=23), timedelta(0), -WEEK])
async def test_a_prune_refuses_an_age_below_the_floor_removing_nothing(
    tmp_path: Path, older_than: timedelta
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    old = await _kept(driver, b'"old"')
    _age(old, 8)

    with pytest.raises(RetentionTooShortError) as refused:
        await driver.prune(older_than)

    assert old.exists()
    assert "the least is 1d" in str(refused.value) and "retention period" in str(refused.value)


async def test_a_prune_of_exactly_the_floor_runs(tmp_path: Path) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    old = await _kept(driver, b'"old"')
    _age(old, 2)

    report = await driver.prune(MIN_OLDER_THAN)

    assert [f.path for f in report.removed] == [old]


async def test_a_prune_refuses_a_directory_that_is_missing_or_a_file(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")

    with pytest.raises(PayloadDirectoryError) as missing:
        await prune_payloads(tmp_path / "missing", WEEK)
    with pytest.raises(PayloadDirectoryError) as a_file:
        await prune_payloads(tmp_path / "a-file", WEEK)

    assert f"{tmp_path / 'missing'}: it does not exist" in str(missing.value)
    assert f"{tmp_path / 'a-file'}: it is not a directory" in str(a_file.value)


async def test_a_payload_used_while_being_pruned_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    (claim,) = await driver.store(StorageDriverStoreContext(), [_payload(b'"in use"')])
    (kept,) = _files(tmp_path / "kept")
    _age(kept, 8)
    claim_file = retention._claim

    def read_first(path: Path, claimed: Path) -> None:
        # A worker reads the payload after the prune found it old, before it took it.
        os.utime(path)
        claim_file(path, claimed)

    monkeypatch.setattr(retention, "_claim", read_first)
    report = await driver.prune(WEEK)

    assert report.removed == () and report.kept == 1
    assert _files(tmp_path / "kept") == {kept}
    (back,) = await driver.retrieve(StorageDriverRetrieveContext(), [claim])
    assert back == _payload(b'"in use"')


async def test_a_store_finding_its_file_taken_by_a_prune_writes_it_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    kept = await _kept(driver, b'"again"')

    def taken_after_the_look(path: Path, blob: bytes) -> bool:
        # The store found its file whole; a prune took it before the store marked it used.
        path.unlink()
        return True

    monkeypatch.setattr(large_payloads, "_holds", taken_after_the_look)
    await _kept(driver, b'"again"')

    assert kept.exists()


async def test_a_prune_reports_each_file_it_could_not_remove_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = DirectoryPayloadDriver(tmp_path / "kept")
    stuck, old = await _kept(driver, b'"stuck"'), await _kept(driver, b'"old"')
    _age(stuck, 8)
    _age(old, 8)
    claim_file = retention._claim

    def refuse_one(path: Path, claimed: Path) -> None:
        if path == stuck:
            raise PermissionError(13, "Permission denied")
        claim_file(path, claimed)

    monkeypatch.setattr(retention, "_claim", refuse_one)
    report = await driver.prune(WEEK)

    assert report.failed == ((stuck, "Permission denied"),)
    assert [f.path for f in report.removed] == [old] and stuck.exists()


# A workflow on the real server whose payload was pruned, beside one whose was not.


async def test_a_workflow_whose_payload_was_pruned_fails_missing_while_a_used_ones_works(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    directory = tmp_path / "payloads"
    client = Client(
        dev_env.client.service_client,
        namespace=dev_env.client.namespace,
        data_converter=data_converter(directory_storage(directory)),
    )
    store = InMemoryStore()
    _, old_turn = _scanner(store, "Old.")
    _, new_turn = _scanner(store, "New.")
    agents = {"old": old_turn, "new": new_turn}
    async with hosting(dev_env, agents, store, client=client) as orchestrator:
        request = TurnInput(message="Scan it", trigger="user", session="s-old")
        await orchestrator.run("old", request, workflow_id="pruned-old")
        for kept in _files(directory):
            _age(kept, 40)
        request = TurnInput(message="Scan it", trigger="user", session="s-new")
        await orchestrator.run("new", request, workflow_id="pruned-new")

        report = await prune_payloads(directory, timedelta(days=30))
        with pytest.raises(StoredPayloadMissingError) as missing:
            await orchestrator.result("pruned-old")
        kept_output = await orchestrator.result("pruned-new")

    assert report.removed and report.kept
    assert str(directory) in str(missing.value)
    assert kept_output.output.message.as_text() == "New."
