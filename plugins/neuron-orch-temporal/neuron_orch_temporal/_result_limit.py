"""The largest result a workflow returns inline: what its starter tells it (`WorkflowInput`).

A workflow's result carries its output and the outputs of every delegation it
ran, each under Temporal's 2 MiB and together past it; the server then refuses
the workflow's completion, again on every retry of its task, and its caller
waits for ever. The workflow cannot see whether its worker keeps large payloads
out of the history, so whoever starts it says, from its own client.
"""

from __future__ import annotations

from typing import Final

from temporalio.client import Client

__all__ = ["MAX_RESULT", "result_limit"]

MAX_RESULT: Final = 2 * 1024 * 1024 - 16 * 1024
"""The largest workflow result, in bytes of JSON, with room for the payload's envelope."""


def result_limit(client: Client) -> int | None:
    """`MAX_RESULT` for a client keeping payloads inline; None when it keeps large ones out."""
    return None if client.data_converter.external_storage is not None else MAX_RESULT
