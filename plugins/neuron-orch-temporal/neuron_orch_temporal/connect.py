"""Connecting to Temporal with the data converter every process must share."""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Final

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, ExternalStorage
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)
from temporalio.service import RPCError

from .errors import ServerUnavailableError
from .names import DEFAULT_ADDRESS, DEFAULT_NAMESPACE

__all__ = ["DATA_CONVERTER", "connect", "data_converter"]

DATA_CONVERTER: Final[DataConverter] = pydantic_data_converter
"""The converter for clients, workers and replayers: layer0 models as their JSON wire form.

Temporal's default converter cannot carry `Decimal` costs; this one writes
them as decimal strings and reads them back with their scale.
"""


def data_converter(storage: ExternalStorage | None = None) -> DataConverter:
    """`DATA_CONVERTER`, keeping large payloads in `storage` when given.

    For a client made without `connect`, and for a `Replayer` of histories
    that refer to payloads kept there.
    """
    if storage is None:
        return DATA_CONVERTER
    return dataclasses.replace(DATA_CONVERTER, external_storage=storage)


async def connect(
    address: str = DEFAULT_ADDRESS,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    storage: ExternalStorage | None = None,
    runtime: Runtime | None = None,
) -> Client:
    """Connect to the Temporal frontend at `address` (`HOST:PORT`).

    `storage` keeps large payloads (a turn's images and documents) out of
    workflow histories (see `neuron_orch_temporal.large_payloads`); every
    client and worker of a namespace must be given the same. `runtime` is the
    SDK's (for its metrics, say); by default one that sends the SDK core's
    warnings to Python's `logging` (logger `temporalio.core`) rather than
    printing them on standard output, where a command's answer goes.

    Raises:
        ServerUnavailableError: nothing answers there.
    """
    converter = data_converter(storage)
    try:
        return await Client.connect(
            address,
            namespace=namespace,
            data_converter=converter,
            runtime=_runtime() if runtime is None else runtime,
        )
    except (RPCError, RuntimeError, OSError) as exc:
        raise ServerUnavailableError(address, str(exc) or type(exc).__name__) from exc


@functools.cache
def _runtime() -> Runtime:
    """The SDK's runtime for this process, its core's warnings sent to Python's logging."""
    forwarding = LogForwardingConfig(logger=logging.getLogger("temporalio.core"))
    filter = TelemetryFilter(core_level="WARN", other_level="ERROR")
    logs = LoggingConfig(filter=filter, forwarding=forwarding)
    return Runtime(telemetry=TelemetryConfig(logging=logs))
