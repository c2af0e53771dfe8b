"""Connecting to Temporal with the data converter every process must share."""

from __future__ import annotations

from typing import Final

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.service import RPCError

from .errors import ServerUnavailableError
from .names import DEFAULT_ADDRESS, DEFAULT_NAMESPACE

__all__ = ["DATA_CONVERTER", "connect"]

DATA_CONVERTER: Final[DataConverter] = pydantic_data_converter
"""The converter for clients, workers and replayers: layer0 models as their JSON wire form.

Temporal's default converter cannot carry `Decimal` costs; this one writes
them as decimal strings and reads them back with their scale.
"""


async def connect(address: str = DEFAULT_ADDRESS, *, namespace: str = DEFAULT_NAMESPACE) -> Client:
    """Connect to the Temporal frontend at `address` (`HOST:PORT`).

    Raises:
        ServerUnavailableError: nothing answers there.
    """
    try:
        return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER)
    except (RPCError, RuntimeError, OSError) as exc:
        raise ServerUnavailableError(address, str(exc) or type(exc).__name__) from exc
