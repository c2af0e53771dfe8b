"""Tool-call ids for Ollama, whose native API gives calls no id (before 0.12) or one we keep.

The loop pairs every tool result with its call by id, so each call needs one
that is unique within the conversation. The scheme:

    call_<position>_<first 16 hex digits of sha256(salt, position, name, arguments)>

- `position` is the call's index in the response, so two identical calls in
  one response still get different ids;
- `salt` is the response's `created_at` timestamp (nanosecond resolution on
  the server), so the same call in two responses gets different ids; a
  response without `created_at` is salted with the provider's call counter
  instead;
- nothing random goes in, so parsing the same response body twice gives the
  same ids (replays and cassettes stay reproducible).
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from pydantic import JsonValue

__all__ = ["synthesise_tool_call_id"]

# Built once: `json.dumps` with options builds a new encoder on every call.
_ENCODER: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def synthesise_tool_call_id(*, salt: str, position: int, name: str, arguments: JsonValue) -> str:
    """Return the stable id of the call at `position` of a response salted with `salt`."""
    try:
        material = _ENCODER.encode([salt, position, name, arguments])
    except RecursionError:
        # Arguments parsed just within Python's depth limit may not write out again from
        # deeper in the stack; the loop refuses them anyway, so salt, place and name do.
        material = _ENCODER.encode([salt, position, name, "(nested too deep)"])
    digest = hashlib.sha256(material.encode()).hexdigest()[:16]
    return f"call_{position}_{digest}"
