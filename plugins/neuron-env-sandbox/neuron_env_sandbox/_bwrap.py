"""The bubblewrap command line of one sandboxed run."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["WORKSPACE", "bwrap_argv"]

WORKSPACE: Final = "/workspace"
"""Where the sandbox sees its private, writable workspace."""

_SYSTEM: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only what programs need to run: no shadow, no ssh keys, no machine secrets.
_ETC: Final = (
    "/etc/alternatives",
    "/etc/ca-certificates",
    "/etc/group",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/resolv.conf",
    "/etc/ssl",
)


def bwrap_argv(
    bwrap: str,
    command: Iterable[str],
    *,
    workspace: Path,
    code: Iterable[Path],
    network: bool,
    as_root: bool,
) -> list[str]:
    """Return the `bwrap` command that runs `command` in the sandbox.

    The root is an empty tmpfs; the system directories, a few files of /etc
    and the `code` paths are bound read-only; /tmp is a private tmpfs; the
    workspace is the only writable host directory. New pid, ipc, uts and
    cgroup namespaces (and network, unless `network`); a new session (no
    terminal to inject keystrokes into); the sandbox dies with its parent.
    """
    argv = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
    ]
    if not network:
        argv.append("--unshare-net")
    if not as_root:
        argv.append("--unshare-user")
    code = list(code)
    # /tmp first: code that lives under /tmp (a checkout there) is bound on top of it.
    argv += ["--perms", "1777", "--tmpfs", "/tmp"]
    argv += _parents([Path(p) for p in _ETC] + code)
    argv += _system_binds()
    for path in code:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--bind", str(workspace), WORKSPACE, "--chdir", WORKSPACE]
    # Root keeps only what it needs to drop to the sandbox's own unprivileged user.
    argv += ["--cap-drop", "ALL"]
    if as_root:
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [*argv, "--", *command]


def _parents(paths: Iterable[Path]) -> list[str]:
    """Create the directories above `paths` world-traversable (bubblewrap makes them 0700)."""
    made: set[Path] = set()
    argv: list[str] = []
    for path in paths:
        for parent in reversed(path.parents):
            if parent not in (Path("/"), Path("/tmp")) and parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def _system_binds() -> list[str]:
    argv: list[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _ETC:
        argv += ["--ro-bind-try", path, path]
    return argv
