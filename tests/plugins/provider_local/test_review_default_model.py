"""Joining the default model after a join that was killed: its partial file goes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from neuron_provider_local import ensure_default_model

from .test_default_model import tiny_model


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_killed_joins_partial_file_is_removed_and_a_running_ones_kept(
    site: Path, tmp_path: Path
) -> None:
    model = tiny_model(site)
    cache = tmp_path / "cache"
    cache.mkdir()
    killed = cache / ".tiny.gguf.abc123.partial"
    killed.write_bytes(b"GGUF-half")
    a_day_ago = time.time() - 86_400
    os.utime(killed, (a_day_ago, a_day_ago))
    running = cache / ".tiny.gguf.def456.partial"  # another process joining right now
    running.write_bytes(b"GGUF-half")
    unrelated = cache / ".other.gguf.abc123.partial"
    unrelated.write_bytes(b"x")
    os.utime(unrelated, (a_day_ago, a_day_ago))

    ensure_default_model(cache_dir=cache, model=model)

    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [running.name, unrelated.name, "tiny.gguf"]
    )
