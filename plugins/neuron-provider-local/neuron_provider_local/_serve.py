"""The embedded server's own process: `python -m neuron_provider_local._serve`.

Protocol: the parent writes one JSON line of settings to this process's
stdin (never argv, which any local user can read). It starts xllamacpp's
server on 127.0.0.1 (the OS picks a free port), requiring the settings'
`api_key` on every request but the health and model listings, with no CORS
(no origin is reflected, so no web page can call it) and no web UI. It
answers one JSON line on stdout, `{"address": "http://127.0.0.1:PORT"}` or
`{"error": "..."}`, and serves until its stdin closes: when the parent stops
it, exits or dies. Nothing here is public.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def main() -> int:
    """Run one server for the settings read from stdin; return the exit status."""
    settings: dict[str, Any] = json.loads(sys.stdin.readline())
    try:
        server = _start(settings)
    except Exception as exc:
        _answer({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    _answer({"address": server.listening_address})
    sys.stdin.read()  # returns at end of file: the parent closed the pipe or died
    # xllamacpp has no stop method: dropping the last reference stops the server.
    del server
    return 0


def _start(settings: dict[str, Any]) -> Any:
    # Imported here, not at module level: xllamacpp has no type information, and a
    # missing engine must become an {"error": …} answer rather than a traceback.
    xllamacpp: Any = importlib.import_module("xllamacpp")
    params = xllamacpp.CommonParams()
    params.model.path = settings["model"]
    params.model_alias = {settings["alias"]}
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True
    params.chat_template = settings["chat_template"]
    params.n_ctx = settings["context_size"]
    params.n_parallel = 1
    params.warmup = False  # saves half a second; the first request warms up instead
    params.verbosity = settings.get("verbosity", -1)
    params.api_keys = [settings["api_key"]]
    # llama-server reflects any Origin by default; an explicit empty list allows none.
    params.cors_origins = ""
    params.cors_origins_explicit = True
    params.cors_credentials = False
    params.ui = False
    params.endpoint_slots = False
    threads = settings.get("threads")
    if threads:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    return xllamacpp.Server(params)


def _answer(message: dict[str, str]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
