"""Render a location inside a JSON value as a JSON path (`$.items[2].name`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def json_path(parts: Iterable[str | int]) -> str:
    """Join object keys and array indexes into a JSON path rooted at `$`.

    Keys that are not plain identifiers are quoted (`$['a b']`), so the path
    stays unambiguous for the model reading it.
    """
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            path += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            path += f"['{escaped}']"
    return path
