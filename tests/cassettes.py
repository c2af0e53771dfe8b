"""vcrpy set-up shared by the provider tests: replay only, scrubbed, all played.

Cassettes are replayed with `record_mode="none"`, so a test never reaches the
network. `NEURON_RECORD=1` (with the provider's API key in the environment)
switches to `record_mode="new_episodes"` to re-record; the filters below keep
keys, cookies and organisation ids out of what is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import vcr
import yaml
from vcr.cassette import Cassette

CASSETTES = Path(__file__).parent / "cassettes"
"""Where this project's own cassettes live, one folder per provider."""

SHARED_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "cassettes"
"""The real recorded exchanges of ../shared/corpus (absent for a lone clone)."""

_REQUEST_HEADERS = (
    "authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "cookie",
    "openai-organization",
)
_RESPONSE_HEADERS = (
    "set-cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
)


class ParsedBodySerializer:
    """Reads pydantic-ai's cassettes, which keep JSON bodies as YAML under `parsed_body`."""

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load(text)
        for interaction in data["interactions"]:
            for kind in ("request", "response"):
                part = interaction[kind]
                if "parsed_body" in part:
                    body = json.dumps(part.pop("parsed_body"))
                    part["body"] = {"string": body} if kind == "response" else body
        return data

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        return str(yaml.safe_dump(data))


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in _RESPONSE_HEADERS:
            del headers[name]
    return response


def recorder(**overrides: Any) -> vcr.VCR:
    """Return a VCR that replays only (records with NEURON_RECORD=1) and scrubs secrets."""
    recording = os.environ.get("NEURON_RECORD") == "1"
    config: dict[str, Any] = {
        "record_mode": "new_episodes" if recording else "none",
        "filter_headers": list(_REQUEST_HEADERS),
        "before_record_response": _scrub_response,
        "match_on": ("method", "scheme", "host", "port", "path", "query", "body"),
        "decode_compressed_response": False,
    }
    config.update(overrides)
    my_vcr = vcr.VCR(**config)
    my_vcr.register_serializer("parsed_body", ParsedBodySerializer)
    return my_vcr


@contextmanager
def replay(path: Path, **overrides: Any) -> Iterator[Cassette]:
    """Replay the cassette at `path`; fail if any recorded interaction was left unplayed."""
    serializer = "parsed_body" if path.name.startswith("pydantic-ai__") else "yaml"
    with recorder(**overrides).use_cassette(str(path), serializer=serializer) as cassette:
        yield cassette
    if os.environ.get("NEURON_RECORD") != "1":
        assert cassette.all_played, (
            f"{path.name}: {len(cassette.data) - cassette.play_count} recorded "
            "interaction(s) were never requested"
        )


def body_values(text: str) -> Iterator[Any]:
    """The JSON values of a recorded body: the body itself, or each `data:` event of a stream.

    A stream's event that is not JSON (`[DONE]`) is skipped.
    """
    try:
        yield json.loads(text)
    except ValueError:
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    yield json.loads(line[5:])
                except ValueError:
                    continue
