"""Where the Ollama server is: `base_url=`, else `OLLAMA_HOST`, else localhost:11434.

`OLLAMA_HOST` is the variable the `ollama` CLI itself reads, so it is often
written the CLI's way, without a scheme (`0.0.0.0:11434`, `gpu-box`,
`:8080`); this parser accepts every form the CLI and ollama-python accept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

__all__ = ["DEFAULT_BASE_URL", "HOST_ENV", "parse_host", "resolve_base_url"]

HOST_ENV: Final = "OLLAMA_HOST"
"""The environment variable naming the Ollama server (the `ollama` CLI's own)."""

DEFAULT_BASE_URL: Final = "http://localhost:11434"
"""Where `ollama serve` listens by default."""

_DEFAULT_PORT: Final = 11434
_SCHEME_PORTS: Final = {"http": 80, "https": 443}


def parse_host(host: str) -> str:
    """Return `host` as a base URL with scheme and port and no trailing slash.

    Without a scheme, `http` and port 11434 are assumed (`gpu-box` →
    `http://gpu-box:11434`); with one, the scheme's own port is
    (`https://ollama.com` → `https://ollama.com:443`). A path is kept.

    Raises:
        ValueError: the scheme is not http or https, the port is not a number, or
            the host holds credentials.
    """
    host = host.strip()
    _refuse_credentials(host)
    scheme, sep, rest = host.partition("://")
    if not sep:
        scheme, rest, default_port = "http", host, _DEFAULT_PORT
    else:
        scheme = scheme.lower()
        if scheme not in _SCHEME_PORTS:
            raise ValueError(f"Ollama host {host!r}: scheme must be http or https, not {scheme!r}")
        default_port = _SCHEME_PORTS[scheme]
    split = urlsplit(f"{scheme}://{rest}")
    try:
        port = split.port or default_port
    except ValueError as exc:
        raise ValueError(f"Ollama host {host!r}: {exc}") from None
    hostname = split.hostname or "localhost"
    if ":" in hostname:  # an IPv6 literal loses its brackets in urlsplit
        hostname = f"[{hostname}]"
    path = split.path.rstrip("/")
    return f"{scheme}://{hostname}:{port}{path}"


def resolve_base_url(base_url: str | None, environ: Mapping[str, str] | None = None) -> str:
    """Return the server's base URL: `base_url`, else `OLLAMA_HOST`, else the default.

    An explicit `base_url` with a scheme is used as given (minus a trailing
    slash), so `http://localhost:11434` stays exactly that; one without a
    scheme goes through `parse_host` like `OLLAMA_HOST` does.
    """
    env = os.environ if environ is None else environ
    if base_url is not None and base_url.strip():
        _refuse_credentials(base_url)
        if "://" in base_url:
            parse_host(base_url)  # validates the scheme and port
            return base_url.strip().rstrip("/")
        return parse_host(base_url)
    host = env.get(HOST_ENV, "").strip()
    return parse_host(host) if host else DEFAULT_BASE_URL


def _refuse_credentials(host: str) -> None:
    """Refuse `user:password@` in `host`, without repeating it.

    Why: every log line and error names the server's URL, so a password in it
    would go wherever they go; the `ollama` CLI itself drops it without a word.
    """
    scheme, sep, rest = host.strip().partition("://")
    netloc = (rest if sep else scheme).split("/", 1)[0]
    if "@" in netloc:
        raise ValueError(
            "the Ollama host holds credentials (user:password@), which every log line and "
            "error naming the server would show; give a key as api_key= (or OLLAMA_API_KEY), "
            "or an httpx.AsyncClient that authenticates as client="
        )
