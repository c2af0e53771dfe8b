"""`truncate_output`: middleware that caps the size of a tool's result."""

from __future__ import annotations

from pydantic import JsonValue
from pydantic_core import to_json

from .files import ToolReturn
from .middleware import Middleware, Next, ToolCall


def truncate_output(max_bytes: int) -> Middleware:
    """Return middleware that cuts results longer than `max_bytes` UTF-8 bytes.

    A string result is measured as is; anything else is measured as compact
    JSON and, if cut, comes back as the truncated JSON text. A `ToolReturn`'s
    value is measured and cut so; its files are kept whole (they are not text
    the model reads, and half an image is no image). The cut falls on
    a character boundary and is followed by a note, `… [truncated N of M
    bytes]`, which is not counted in `max_bytes`. Results within the limit
    pass through unchanged.

    Raises:
        ValueError: `max_bytes` is not positive.
    """
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")

    async def truncate_middleware(call: ToolCall, next: Next) -> JsonValue | ToolReturn:
        result = await next(call)
        if isinstance(result, ToolReturn):
            value = truncate(result.value, max_bytes)
            return result if value is result.value else ToolReturn(value, files=result.files)
        return truncate(result, max_bytes)

    return truncate_middleware


def truncate(result: JsonValue, max_bytes: int) -> JsonValue:
    """Return `result` unchanged if it fits in `max_bytes`, else its truncated text with a note."""
    if isinstance(result, str):
        # No character takes more than 4 bytes, so short strings skip the encoding.
        if len(result) * 4 <= max_bytes:
            return result
        data = result.encode("utf-8")
    else:
        data = to_json(result)
    if len(data) <= max_bytes:
        return result
    kept = _cut(data, max_bytes)
    return f"{kept}… [truncated {len(data) - len(kept.encode('utf-8'))} of {len(data)} bytes]"


def _cut(data: bytes, limit: int) -> str:
    """Decode at most `limit` bytes of `data` without splitting a multi-byte character."""
    end = limit
    # 0b10xxxxxx bytes continue a character; cutting before one would split it.
    while end > 0 and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end].decode("utf-8")
