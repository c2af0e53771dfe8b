"""Large payloads kept out of Temporal's history: a directory every process shares.

Temporal refuses a payload past 2 MiB, and every activity's input and
output stays in the workflow's history. A turn whose messages or tools
carry images and documents outgrows that quickly. Temporal's external
storage (the claim-check pattern, `temporalio.converter.ExternalStorage`)
keeps each payload past a threshold elsewhere and puts a small reference in
the history; `DirectoryPayloadDriver` is a driver for it that keeps them as
files in one directory, which the client and every worker must see (one
machine, or a shared volume). For S3, pass temporalio's own
`temporalio.contrib.aws.s3driver.S3StorageDriver` the same way.

Each file is named by the SHA-256 of what it holds, written whole or not at
all (a temporary file renamed into place), and checked against its name when
read back, so a reference cannot be pointed at another payload or outside the
directory, and a damaged file is an error, never a wrong input; storing the same
payload again (a retried activity, the next heartbeat) writes it anew if damaged.
Files are kept until pruned (`DirectoryPayloadDriver.prune`,
`neuron_orch_temporal.retention`): a replay, or a query of a finished workflow,
reads them again, so a prune removes only those unused for longer than their
histories are kept; storing a payload again or reading it marks its file used.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Final

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from ._layout import DIGEST, INCOMING_PREFIX, payload_path, touch
from .errors import StoredPayloadCorruptError, StoredPayloadMissingError
from .retention import PruneReport, prune_payloads

__all__ = ["DEFAULT_THRESHOLD", "DirectoryPayloadDriver", "directory_storage"]

DEFAULT_THRESHOLD: Final = 256 * 1024
"""Payloads of this many bytes or more are kept in the directory: Temporal warns on
payloads past 512 KiB, and a small one is cheaper inline."""

_CLAIM_KEY: Final = "sha256"


class DirectoryPayloadDriver(StorageDriver):
    """A Temporal storage driver keeping payloads as files in `directory`.

    Why a directory: it needs nothing but a path every process sees, and a
    file per payload, named by its digest, makes a store idempotent (a
    retried activity stores the same bytes under the same name).
    """

    def __init__(self, directory: str | os.PathLike[str], *, name: str = "neuron.directory"):
        """Keep payloads under `directory` (made, private to this user, if missing)."""
        self.directory = Path(directory)
        self._name = name

    def __repr__(self) -> str:
        return f"DirectoryPayloadDriver({str(self.directory)!r})"

    def name(self) -> str:
        """This driver's name in the references it writes (`neuron.directory` by default)."""
        return self._name

    def type(self) -> str:
        """The driver's kind, the same for every instance."""
        return "neuron.directory"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        """Write each payload to its file (unless there already) and return its claim."""
        del context
        return await asyncio.to_thread(self._store_all, [p.SerializeToString() for p in payloads])

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        """Read back the payload of each claim.

        Raises:
            StoredPayloadMissingError: a claim names no digest, or no file holds it.
            StoredPayloadCorruptError: the file's bytes do not match its digest.
        """
        del context
        digests = [self._digest_of(claim) for claim in claims]
        return await asyncio.to_thread(self._retrieve_all, digests)

    async def prune(self, older_than: timedelta, *, dry_run: bool = False) -> PruneReport:
        """Remove the payload files not written or read for longer than `older_than`.

        Why: nothing else removes them. Give more than the namespace's
        retention period plus the longest a workflow runs: a workflow whose
        payload is gone fails with `StoredPayloadMissingError`. See
        `neuron_orch_temporal.retention.prune_payloads`, which this calls.

        Raises:
            RetentionTooShortError: `older_than` is less than `retention.MIN_OLDER_THAN`.
            PayloadDirectoryError: the directory is missing, not a directory, or unreadable.
        """
        return await prune_payloads(self.directory, older_than, dry_run=dry_run)

    def _store_all(self, blobs: list[bytes]) -> list[StorageDriverClaim]:
        return [StorageDriverClaim(claim_data={_CLAIM_KEY: self._write(blob)}) for blob in blobs]

    def _write(self, blob: bytes) -> str:
        digest = hashlib.sha256(blob).hexdigest()
        path = payload_path(self.directory, digest)
        # Marked used, so a prune keeps it; gone meanwhile (a prune took it): written anew.
        if _holds(path, blob) and touch(path):
            return digest
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written beside its final name and renamed: a reader sees all of it or no file.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=INCOMING_PREFIX)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(blob)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _sync_directory(path.parent)
        return digest

    def _retrieve_all(self, digests: list[str]) -> list[Payload]:
        return [self._read(digest) for digest in digests]

    def _read(self, digest: str) -> Payload:
        path = payload_path(self.directory, digest)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise StoredPayloadMissingError(str(path), self.directory) from None
        if hashlib.sha256(blob).hexdigest() != digest:
            raise StoredPayloadCorruptError(str(path), "its bytes do not match its name")
        # Marked used, so a prune keeps what a replay or a query reads; a volume this
        # process may only read still gives the payload.
        with contextlib.suppress(OSError):
            touch(path)
        payload = Payload()
        payload.ParseFromString(blob)
        return payload

    def _digest_of(self, claim: StorageDriverClaim) -> str:
        digest = claim.claim_data.get(_CLAIM_KEY, "")
        # A reference comes from the history, which this process did not write: a name
        # other than a digest could reach a file outside the directory.
        if not DIGEST.fullmatch(digest):
            raise StoredPayloadMissingError(f"a claim naming {digest[:80]!r}", self.directory)
        return digest


def directory_storage(
    directory: str | os.PathLike[str], *, threshold: int = DEFAULT_THRESHOLD
) -> ExternalStorage:
    """Temporal external storage keeping payloads of `threshold` bytes or more in `directory`.

    Give the same to the client of every process (`connect(..., storage=...)`,
    `TemporalOrchestrator(storage=...)`, `create_worker`'s client): a process
    without it cannot read what the others kept there.
    """
    Path(directory).mkdir(mode=0o700, parents=True, exist_ok=True)
    return ExternalStorage(
        drivers=[DirectoryPayloadDriver(directory)], payload_size_threshold=threshold
    )


def _holds(path: Path, blob: bytes) -> bool:
    """Whether `path` already holds `blob`: a file damaged since is written again, whole."""
    try:
        if path.stat().st_size != len(blob):
            return False
        return path.read_bytes() == blob
    except FileNotFoundError:
        return False


def _sync_directory(directory: Path) -> None:
    """Make a rename in `directory` survive a crash."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
