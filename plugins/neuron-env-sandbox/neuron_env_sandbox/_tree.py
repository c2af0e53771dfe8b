"""Walking a workspace a child left, however deep, through no symbolic link.

A child can nest directories deeper than Python recurses (`os.walk` and
`shutil.rmtree` recurse once per level) and deeper than a path may be long:
the walk keeps one open directory and a list of names per level, and climbs
back through `..`. Only after the child's processes are gone, so nothing
moves while it runs.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["chown_tree", "remove_tree"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass
class _Level:
    name: str
    """The directory's name in the one above (empty for the top)."""
    pending: list[str] = field(default_factory=list)
    """Its subdirectories not entered yet."""
    read: bool = False
    """Whether its entries were read (and its other entries visited)."""
    identity: tuple[int, int] = (0, 0)
    """Its device and inode: climbing back through `..` must reach it again."""


def _walk(
    top: Path,
    *,
    entering: Callable[[int, str], None],
    other: Callable[[int, os.DirEntry[str]], None],
    left: Callable[[int, str], None],
) -> None:
    """Visit every entry below `top`, depth first, with the directory holding it open.

    `entering(parent, name)` runs before a directory is opened, `other(directory,
    entry)` for each entry that is no directory (links included), and
    `left(parent, name)` once a directory's entries are all visited.

    Raises:
        OSError: a directory could not be opened or read.
    """
    descriptor = os.open(top, _DIRECTORY)
    levels = [_Level("", identity=_identity(descriptor))]
    try:
        while True:
            level = levels[-1]
            if not level.read:
                with os.scandir(descriptor) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            level.pending.append(entry.name)
                        else:
                            other(descriptor, entry)
                level.read = True
            if level.pending:
                name = level.pending.pop()
                entering(descriptor, name)
                inner = os.open(name, _DIRECTORY, dir_fd=descriptor)
                os.close(descriptor)
                descriptor = inner
                levels.append(_Level(name, identity=_identity(descriptor)))
                continue
            if len(levels) == 1:
                return
            levels.pop()
            parent = os.open("..", _DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = parent
            if _identity(descriptor) != levels[-1].identity:
                raise OSError(errno.ESTALE, f"{top}: a directory moved during the walk")
            left(descriptor, level.name)
    finally:
        os.close(descriptor)


def _identity(descriptor: int) -> tuple[int, int]:
    status = os.fstat(descriptor)
    return status.st_dev, status.st_ino


def remove_tree(top: Path) -> None:
    """Delete `top` and everything in it, opening up directories left unreadable.

    Raises:
        OSError: something in it could not be removed.
    """
    os.chmod(top, 0o700)
    _walk(
        top,
        entering=lambda parent, name: os.chmod(name, 0o700, dir_fd=parent),
        other=lambda directory, entry: os.unlink(entry.name, dir_fd=directory),
        left=lambda parent, name: os.rmdir(name, dir_fd=parent),
    )
    os.rmdir(top)


def chown_tree(top: Path, uid: int) -> None:
    """Give `top` and everything in it to `uid` (links themselves, never what they point at)."""

    def chown(directory: int, name: str) -> None:
        os.chown(name, uid, uid, dir_fd=directory, follow_symlinks=False)

    os.chown(top, uid, uid)
    _walk(
        top,
        entering=chown,
        other=lambda directory, entry: chown(directory, entry.name),
        left=lambda parent, name: None,
    )
