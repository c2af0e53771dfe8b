"""The largest payload a workflow hands Temporal inline, as its starter says (`WorkflowInput`).

A workflow's result carries its output and the outputs of every delegation it
ran, each under Temporal's 2 MiB and together past it; a turn's input grows
past it from parts under it too (a signal's payload, which the input carries
twice, or decisions; a handoff's state beside the conversation). The server
then refuses the workflow's task, again on every retry, and its caller waits
for ever. The workflow cannot see whether its worker keeps large payloads out
of the history, so whoever starts it says, from its own client.
"""

from __future__ import annotations

from typing import Final

from temporalio.client import Client

__all__ = ["MAX_PAYLOAD", "payload_limit"]

MAX_PAYLOAD: Final = 2 * 1024 * 1024 - 16 * 1024
"""The largest payload, in bytes of JSON, with room for its envelope."""


def payload_limit(client: Client) -> int | None:
    """`MAX_PAYLOAD` for a client keeping payloads inline; None when it keeps large ones out."""
    return None if client.data_converter.external_storage is not None else MAX_PAYLOAD
