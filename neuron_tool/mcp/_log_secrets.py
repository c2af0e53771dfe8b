"""Keep secrets in an MCP server's URL out of the logs of the libraries that carry it.

httpx logs every request's URL at INFO and the MCP SDK the endpoint's at DEBUG,
whole: a token in the URL's query (`?api_key=...`) or a password before its host
went into any log an application keeps. A filter on those loggers hides them as
`HttpEndpoint.describe` does, before any handler sees the record.
"""

from __future__ import annotations

import logging
import re
from typing import Final

__all__ = ["hide_url_secrets_in_logs"]

# The loggers that write a request's or an endpoint's URL: httpx's (the MCP SDK's HTTP
# client is httpx2), and the SDK's transports' (their modules' names).
_LOGGERS: Final = ("httpx", "httpx2", "mcp.client.streamable_http", "mcp.client.sse")
_USERINFO: Final = re.compile(r"(?<=://)[^/\s@]+@")
_SECRET_QUERY: Final = re.compile(
    r"(?<=[?&])([^=&\s]*(?:token|key|secret|passw|auth|credential|bearer)[^=&\s]*)=[^&\s\"']*",
    re.IGNORECASE,
)


class _HideUrlSecrets(logging.Filter):
    """Rewrite a record's message with URL passwords and secret-named query values hidden."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = _SECRET_QUERY.sub(r"\1=***", _USERINFO.sub("***@", message))
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


_FILTER: Final = _HideUrlSecrets()


def hide_url_secrets_in_logs() -> None:
    """Put the filter on the loggers that write URLs (once: adding it again changes nothing)."""
    for name in _LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)
