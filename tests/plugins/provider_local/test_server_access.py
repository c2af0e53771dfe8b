"""The embedded server is no open door: a per-process key, no CORS, no web UI (real server).

One server start (the default model; a few seconds) serves every check, so
this stays as fast as the smoke tests. That our own client sends the key is
shown by every smoke test: their calls would be refused without it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from neuron_provider_local import EmbeddedServer, ServerSettings, tool_calling_template
from neuron_provider_local.default_model import ensure_default_model

EVIL = "http://evil.example"


async def test_the_server_refuses_requests_without_its_key_and_reflects_no_origin() -> None:
    model = await asyncio.to_thread(ensure_default_model)
    settings = ServerSettings(
        model=model, alias=model.name, chat_template=tool_calling_template(), context_size=512
    )
    server = await EmbeddedServer.start(settings)
    try:
        key = server.api_key
        assert len(key) >= 32
        assert key not in repr(server)
        assert key not in Path(f"/proc/{server.pid}/cmdline").read_text()  # argv is public
        async with httpx.AsyncClient(base_url=server.address, timeout=120) as client:
            tokenize = {"content": "hello"}
            anonymous = await client.post("/tokenize", json=tokenize)
            wrong = await client.post(
                "/tokenize", json=tokenize, headers={"Authorization": "Bearer not-the-key"}
            )
            assert (anonymous.status_code, wrong.status_code) == (401, 401)

            allowed = await client.post(
                "/tokenize",
                json=tokenize,
                headers={"Authorization": f"Bearer {key}", "Origin": EVIL},
            )
            assert allowed.status_code == 200 and allowed.json()["tokens"]
            assert not allowed.headers.get("access-control-allow-origin")

            preflight = await client.options(
                "/v1/chat/completions",
                headers={"Origin": EVIL, "Access-Control-Request-Method": "POST"},
            )
            assert not preflight.headers.get("access-control-allow-origin")
            assert preflight.headers.get("access-control-allow-credentials") != "true"

            page = await client.get("/", headers={"Authorization": f"Bearer {key}"})
            assert page.status_code == 404  # no web UI
    finally:
        await server.stop()
