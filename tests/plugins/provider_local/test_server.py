"""`EmbeddedServer`: settings sent to the child, and failures to start (real child processes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neuron_provider_local import EmbeddedServer, ServerSettings, ServerStartError


def settings(model: Path, **fields: Any) -> ServerSettings:
    return ServerSettings(model=model, alias=model.name, chat_template="{{ messages }}", **fields)


def test_the_settings_line_holds_everything_the_child_needs(tmp_path: Path) -> None:
    line = settings(tmp_path / "m.gguf", context_size=2048, threads=2).as_json()
    assert line == {
        "model": str(tmp_path / "m.gguf"),
        "alias": "m.gguf",
        "chat_template": "{{ messages }}",
        "context_size": 2048,
        "threads": 2,
    }


async def test_a_file_that_is_not_a_model_fails_with_the_server_s_reason(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"this is not a GGUF file" * 100)
    with pytest.raises(ServerStartError) as caught:
        await EmbeddedServer.start(settings(bogus), timeout=120)
    message = str(caught.value)
    assert message.startswith(f"local: the embedded server could not load {bogus}: ")
    assert "Failed to init server" in message
    assert not caught.value.retryable


async def test_a_model_that_loads_too_slowly_fails_and_its_process_is_ended(
    tmp_path: Path,
) -> None:
    bogus = tmp_path / "slow.gguf"
    bogus.write_bytes(b"x")
    with pytest.raises(ServerStartError, match=r"did not load .*slow\.gguf within 0\.001 s"):
        await EmbeddedServer.start(settings(bogus), timeout=0.001)
