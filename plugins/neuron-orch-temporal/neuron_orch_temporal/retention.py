"""Retention of a payload directory: remove the payloads no workflow history needs any more.

`directory_storage` keeps a turn's large payloads as files, and nothing in
Temporal removes them. A history refers to its payloads for as long as the
namespace keeps it (while its workflow runs, then its retention period), and
a replay or a query reads them again. `prune_payloads` (or
`DirectoryPayloadDriver.prune`) removes the payload files not used (written,
stored again or read) for longer than `older_than`, which must therefore be
more than the namespace's retention period plus the longest a workflow runs;
it refuses less than `MIN_OLDER_THAN`.

Only the directory's own files are removed: a payload file where the
driver keeps it (`ab/ab12...`, 64 hex digits), and the temporary files a
write or a prune stopped midway left beside them, once as old. Anything else
(a stray file, a subdirectory, a link) is left alone, wherever it is.

It runs beside the processes using the directory: a payload file is taken
from its name by a rename, which is atomic, and its age checked again; one
stored again or read in between is put back, and a store finding its file
gone writes it anew. Importing this module imports no temporalio, so the
command line prunes without it.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from ._layout import DIGEST, INCOMING_PREFIX, PRUNING_PREFIX, SHARD
from .errors import PayloadDirectoryError, RetentionTooShortError

__all__ = ["MIN_OLDER_THAN", "PruneReport", "PrunedFile", "prune_payloads"]

MIN_OLDER_THAN: Final = timedelta(days=1)
"""The shortest `older_than` a prune takes: no namespace keeps a closed workflow's
history for less (Temporal's least retention period), and its payloads are needed
as long as it is kept."""


@dataclass(frozen=True)
class PrunedFile:
    """One file a prune removed (or, dry, would remove).

    Why each, not a count: a dry run is read to see what would go.
    """

    path: Path
    size: int
    """Its size in bytes."""
    last_used: datetime
    """When it was last written or read (its modification time), in UTC."""


@dataclass(frozen=True)
class PruneReport:
    """What a prune of a payload directory removed, kept, and could not remove.

    Why a report: the command line prints it, and a scheduled job logs it.
    """

    directory: Path
    older_than: timedelta
    dry_run: bool
    """True when nothing was removed: `removed` is what would have been."""
    removed: tuple[PrunedFile, ...]
    kept: int
    """How many payload files were used more recently than `older_than`, and stay."""
    failed: tuple[tuple[Path, str], ...] = ()
    """Each file that could not be removed (permissions, a read-only volume), and why."""

    @property
    def removed_bytes(self) -> int:
        """The bytes the removed files took."""
        return sum(file.size for file in self.removed)


@dataclass(frozen=True)
class _Candidate:
    file: PrunedFile
    payload: bool
    """False for a temporary file a write or a prune left."""


async def prune_payloads(
    directory: str | os.PathLike[str], older_than: timedelta, *, dry_run: bool = False
) -> PruneReport:
    """Remove the payload files in `directory` not used for longer than `older_than`.

    Why by age: a history does not say when it is deleted, and the files do
    not say which history uses them; a file is used when written, stored
    again or read, so one a running workflow or a replay uses stays.
    `dry_run` lists what would go and removes nothing.

    Raises:
        RetentionTooShortError: `older_than` is less than `MIN_OLDER_THAN`.
        PayloadDirectoryError: `directory` is missing, not a directory, or unreadable.
    """
    if older_than < MIN_OLDER_THAN:
        raise RetentionTooShortError(older_than, MIN_OLDER_THAN)
    return await asyncio.to_thread(_prune, Path(directory), older_than, dry_run)


def _prune(directory: Path, older_than: timedelta, dry_run: bool) -> PruneReport:
    cutoff = time.time() - older_than.total_seconds()
    # Every candidate found before any is removed: a directory that cannot be read
    # is refused with nothing removed.
    candidates, kept = _candidates(directory, cutoff)
    removed: list[PrunedFile] = []
    failed: list[tuple[Path, str]] = []
    for candidate in candidates:
        if dry_run:
            removed.append(candidate.file)
            continue
        try:
            outcome = _remove(candidate, cutoff)
        except OSError as exc:
            failed.append((candidate.file.path, exc.strerror or str(exc)))
            continue
        if outcome is True:
            removed.append(candidate.file)
        elif outcome is False:
            kept += 1
    return PruneReport(
        directory=directory,
        older_than=older_than,
        dry_run=dry_run,
        removed=tuple(removed),
        kept=kept,
        failed=tuple(failed),
    )


def _candidates(directory: Path, cutoff: float) -> tuple[list[_Candidate], int]:
    """The files of ours older than `cutoff`, and how many payload files are not."""
    candidates: list[_Candidate] = []
    kept = 0
    for shard in _shards(directory):
        for entry in _entries(directory, shard):
            payload = DIGEST.fullmatch(entry.name) is not None and entry.name[:2] == shard.name
            if not payload and not entry.name.startswith((INCOMING_PREFIX, PRUNING_PREFIX)):
                continue  # not ours: left alone
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed meanwhile
            if stat.st_mtime >= cutoff:
                kept += payload
                continue
            used = datetime.fromtimestamp(stat.st_mtime, UTC)
            candidates.append(_Candidate(PrunedFile(Path(entry.path), stat.st_size, used), payload))
    return candidates, kept


def _shards(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return sorted(
                (e for e in entries if SHARD.fullmatch(e.name) and e.is_dir(follow_symlinks=False)),
                key=lambda e: e.name,
            )
    except FileNotFoundError:
        raise PayloadDirectoryError(directory, "it does not exist") from None
    except NotADirectoryError:
        raise PayloadDirectoryError(directory, "it is not a directory") from None
    except OSError as exc:
        raise PayloadDirectoryError(directory, exc.strerror or str(exc)) from None


def _entries(directory: Path, shard: os.DirEntry[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(shard.path) as entries:
            return sorted(entries, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PayloadDirectoryError(directory, f"{shard.path}: {exc.strerror or exc}") from None


def _remove(candidate: _Candidate, cutoff: float) -> bool | None:
    """Remove `candidate` unless used since it was found: True removed, False kept.

    None when it was gone already (another prune took it).
    """
    path = candidate.file.path
    if not candidate.payload:
        # A write takes seconds: a temporary file this old belongs to no live write.
        try:
            path.unlink()
        except FileNotFoundError:
            return None
        return True
    claimed = path.with_name(PRUNING_PREFIX + path.name)
    try:
        _claim(path, claimed)
        used = claimed.stat().st_mtime
    except FileNotFoundError:
        return None
    if used >= cutoff:
        # Stored again or read between the look and the rename: it is in use, put it back.
        os.replace(claimed, path)
        return False
    try:
        claimed.unlink()
    except FileNotFoundError:
        return None
    return True


def _claim(path: Path, claimed: Path) -> None:
    """Take `path` from its name; a reader or a store no longer finds it there."""
    os.rename(path, claimed)
