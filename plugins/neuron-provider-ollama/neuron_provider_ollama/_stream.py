"""Reading Ollama's NDJSON stream (`"stream": true`), line by line.

Each line is a JSON object carrying a fragment of `message.content` /
`message.thinking` (and, on newer servers, whole `tool_calls`); the line with
`"done": true` carries `done_reason` and the token counts. `feed_line`
returns the text and thinking deltas a line carries (what
`OllamaProvider.stream` yields) and `body()` the folded body, which has
exactly the non-streaming shape, so one parser serves both modes.
"""

from __future__ import annotations

import json
from typing import Any

from neuron_turn.loop.events import ProviderDelta, TextDelta, ThinkingDelta
from neuron_turn.loop.http_errors import body_prefix
from neuron_turn.loop.provider_errors import (
    ProviderConnectionError,
    ProviderResponseError,
    ProviderServerError,
)

from ._errors import PROVIDER

__all__ = ["StreamAccumulator"]


class StreamAccumulator:
    """Collects the lines of one streamed answer; `body()` returns the folded response."""

    __slots__ = ("_content", "_final", "_thinking", "_tool_calls")

    def __init__(self) -> None:
        self._content: list[str] = []
        self._thinking: list[str] = []
        self._tool_calls: list[Any] = []
        self._final: dict[str, Any] | None = None

    def feed_line(self, line: str) -> list[ProviderDelta]:
        """Add one NDJSON line (blank lines are ignored); return the deltas it carries.

        Raises:
            ProviderResponseError: the line is not a JSON object.
            ProviderServerError: the server reported an error mid-stream.
        """
        line = line.strip()
        if not line:
            return []
        try:
            chunk = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deep
            chunk = None
        if not isinstance(chunk, dict):
            raise ProviderResponseError(
                f"Ollama streamed a line that is not a JSON object: {body_prefix(line)}",
                provider=PROVIDER,
            )
        if "error" in chunk:
            raise ProviderServerError(
                f"Ollama failed mid-stream: {chunk['error']}", provider=PROVIDER
            )
        deltas = self._add_message(chunk.get("message"))
        if chunk.get("done") is True:
            self._final = chunk
        return deltas

    def _add_message(self, message: object) -> list[ProviderDelta]:
        deltas: list[ProviderDelta] = []
        if not isinstance(message, dict):
            return deltas
        if isinstance(thinking := message.get("thinking"), str) and thinking:
            self._thinking.append(thinking)
            deltas.append(ThinkingDelta(thinking))
        if isinstance(content := message.get("content"), str) and content:
            self._content.append(content)
            deltas.append(TextDelta(content))
        # Tool calls arrive whole; their ids depend on the final line (see _tool_ids),
        # so the provider announces them once the stream is done.
        if isinstance(tool_calls := message.get("tool_calls"), list):
            self._tool_calls.extend(tool_calls)
        return deltas

    def body(self) -> dict[str, Any]:
        """Return the folded body, shaped like a non-streaming `/api/chat` answer.

        Raises:
            ProviderConnectionError: the stream ended before its `done` line.
        """
        if self._final is None:
            raise ProviderConnectionError(
                "the Ollama stream ended before its final line (done: true)", provider=PROVIDER
            )
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._tool_calls:
            message["tool_calls"] = self._tool_calls
        return {**self._final, "message": message}
