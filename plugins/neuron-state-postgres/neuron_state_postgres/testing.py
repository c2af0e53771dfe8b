"""A throwaway PostgreSQL cluster, for tests and benchmarks of code that uses `PostgresStore`.

`throwaway_server()` runs `initdb` into a temporary directory, starts the
cluster on 127.0.0.1 on a free port with scram-sha-256 and a random
password (never a trusted login, even on loopback), and stops it and removes
its files at the end. `fsync` is off: it is for tests, whose data may go.
Postgres refuses to run as root, so as root the cluster belongs to the
`postgres` user the Debian package creates and its commands run through
`runuser`. The PostgreSQL server binaries must be installed (Debian's
`postgresql`).
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import quote

__all__ = [
    "ThrowawayServer",
    "ThrowawayServerError",
    "bin_dir",
    "free_port",
    "throwaway_server",
]

USER: Final = "neuron"
"""The superuser of a throwaway cluster."""
DATABASE: Final = "postgres"


class ThrowawayServerError(RuntimeError):
    """A throwaway cluster cannot start: PostgreSQL is missing, or a command of it failed."""


@dataclass(frozen=True)
class ThrowawayServer:
    """A running throwaway cluster: where it listens and its superuser's password."""

    port: int
    password: str = field(repr=False)
    socket_dir: Path

    def conninfo(self, *, password: str | None = None, host: str = "127.0.0.1") -> str:
        """A `postgresql://` URL for the superuser, with `password` (default: the right one)."""
        secret = quote(self.password if password is None else password, safe="")
        return f"postgresql://{USER}:{secret}@{host}:{self.port}/{DATABASE}"

    def conninfo_without_password(self) -> str:
        """A URL naming no password, for PGPASSWORD or ~/.pgpass to supply."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"


def bin_dir() -> Path:
    """The newest installed PostgreSQL's binaries (Debian keeps them off PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise ThrowawayServerError(
            "PostgreSQL is not installed (Debian: apt install postgresql; here:"
            " scripts/setup.d/test-postgres)"
        )
    return Path(initdb).parent


@contextmanager
def throwaway_server() -> Iterator[ThrowawayServer]:
    """Start a new cluster, yield it, then stop it and remove its files.

    Raises:
        ThrowawayServerError: PostgreSQL is not installed, or `initdb` or `pg_ctl` failed
            (their output in the message).
    """
    root = Path(tempfile.mkdtemp(prefix="neuron-pg-"))
    owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    try:
        password = secrets.token_urlsafe(24)
        (root / "pwfile").write_text(password + "\n")
        if owner is not None:
            for path in (root, root / "pwfile"):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        data = root / "data"
        _run(
            owner,
            "initdb",
            "-D",
            str(data),
            "-U",
            USER,
            "--auth=scram-sha-256",
            f"--pwfile={root / 'pwfile'}",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        port = free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                f"unix_socket_directories = '{root}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "max_connections = 200\n"
            )
        _run(owner, "pg_ctl", "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "start")
        try:
            yield ThrowawayServer(port=port, password=password, socket_dir=root)
        finally:
            _run(owner, "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(owner: pwd.struct_passwd | None, program: str, *args: str) -> None:
    command = [str(bin_dir() / program), *args]
    if owner is not None:
        command = ["runuser", "-u", owner.pw_name, "--", *command]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise ThrowawayServerError(f"{program} failed ({completed.returncode}): {completed.stderr}")


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (at the time of asking)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
