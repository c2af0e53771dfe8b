"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory, started
on 127.0.0.1 on a free port with scram-sha-256 and a random password, stopped at the end.

Postgres refuses to run as root, so as root the cluster belongs to the `postgres` user the
Debian package creates and its commands run through `runuser`.
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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

__all__ = ["Server", "free_port", "postgres_server", "running_server"]

USER = "neuron"
DATABASE = "postgres"


@dataclass(frozen=True)
class Server:
    """A running cluster: where it listens and the superuser's password."""

    port: int
    password: str
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
        raise RuntimeError("PostgreSQL is not installed: run scripts/setup.d/test-postgres")
    return Path(initdb).parent


@contextmanager
def running_server() -> Iterator[Server]:
    """Start a new cluster, yield it, then stop it and remove its files."""
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
        port = _free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                f"unix_socket_directories = '{root}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "max_connections = 200\n"
            )
        _run(owner, "pg_ctl", "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "start")
        try:
            yield Server(port=port, password=password, socket_dir=root)
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
        raise RuntimeError(f"{program} failed ({completed.returncode}): {completed.stderr}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """One throwaway cluster for the whole session; each test takes a schema of its own."""
    with running_server() as server:
        yield server


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (at the time of asking)."""
    return _free_port()
