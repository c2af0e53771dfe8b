"""An HTTP provider's endpoint URL, parsed once: for provider-plugin authors.

httpx parses a URL given as text on every request (~10 µs); a provider that
posts to one endpoint parses it once, when it is built. This module imports
httpx: import it from a provider module, never from a plugin's entry-point
module, so that listing plugins stays cheap.
"""

from __future__ import annotations

import httpx

__all__ = ["parsed_endpoint"]


def parsed_endpoint(url: str) -> httpx.URL | str:
    """Return `url` parsed, to pass to the client on every call instead of the text.

    A URL httpx cannot parse stays text, so the first call fails on it (with the
    provider's own error for an unusable endpoint), as it did unparsed.
    """
    try:
        return httpx.URL(url)
    except httpx.InvalidURL:
        return url
