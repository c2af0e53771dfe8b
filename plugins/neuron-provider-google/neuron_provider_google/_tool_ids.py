"""Ids for the function calls Gemini sends without one (its API often gives none).

The loop pairs every tool result with its call by id, so each call needs one
that is unique within the conversation. The scheme (the Ollama provider's):

    call_<position>_<first 16 hex digits of sha256(salt, position, name, args)>

- `position` is the call's index among the answer's calls, so two identical
  calls in one answer still get different ids;
- `salt` is the answer's `responseId`, so the same call in two answers gets
  different ids; an answer without one is salted with the provider's own
  call counter instead;
- nothing random goes in, so the same body read twice (a stream and its
  final answer, a replayed cassette) gives the same ids.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from pydantic import JsonValue

__all__ = ["synthesised_call_id"]

# Built once: `json.dumps` with options builds a new encoder on every call.
_ENCODER: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def synthesised_call_id(*, salt: str, position: int, name: str, args: JsonValue) -> str:
    """Return the stable id of the call at `position` of an answer salted with `salt`."""
    try:
        material = _ENCODER.encode([salt, position, name, args])
    except (RecursionError, ValueError):  # arguments nested past what the encoder walks
        material = _ENCODER.encode([salt, position, name])
    digest = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"call_{position}_{digest}"
