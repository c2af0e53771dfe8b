"""`neuron-turn ui` in a real browser: headless Chromium loads the pages and screenshots them.

The state file is filled by real turns through the command line (the
README's calculator turn among them), `neuron-turn ui` runs as its own
process, and Chromium (Debian's `chromium`, from scripts/setup.d/test-chromium)
opens the URL it printed, token included, as a user would. Chromium is told
not to reach anything but the viewer.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from .conftest import PLUGINS, Filled

CHROMIUM: Final = shutil.which("chromium") or "chromium"
_FLAGS: Final = (
    "--headless",
    "--no-sandbox",  # root in CI: Chromium's own sandbox needs an unprivileged user
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-domain-reliability",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
    "--hide-scrollbars",
    "--window-size=1280,1000",
)
_TIMEOUT: Final = 180


@pytest.fixture
def ui(filled: Filled, tmp_path: Path) -> Iterator[str]:
    """`neuron-turn ui` on the filled file, as a process; yields the URL it printed."""
    environment = os.environ | {"NEURON_LOAD_PLUGINS": PLUGINS}
    process = subprocess.Popen(
        [sys.executable, "-m", "neuron_turn", "ui", "--state", str(filled.path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w.~-]+", line)
        assert found is not None, (line, process.stderr.read() if process.stderr else "")
        yield found.group(0)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=_TIMEOUT)
    assert process.returncode == 130  # Ctrl-C: interrupted, as for every command


def browse(url: str, profile: Path, *action: str) -> str:
    """Run headless Chromium on `url` with a fresh profile; return what it printed."""
    done = subprocess.run(
        [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *action, url],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def page(url: str, path: str, tmp_path: Path, name: str) -> tuple[str, Path]:
    """The DOM Chromium built for `path` (opened with the token), and a screenshot of it."""
    base, token = url.split("/?token=")
    address = f"{base}{path}?token={token}"
    dom = browse(address, tmp_path / f"profile-{name}", "--dump-dom")
    shot = tmp_path / f"{name}.png"
    browse(address, tmp_path / f"profile-{name}-shot", f"--screenshot={shot}")
    return dom, shot


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_browser_shows_the_sessions_and_their_turns(
    ui: str, filled: Filled, tmp_path: Path
) -> None:
    dom, shot = page(ui, "/", tmp_path, "sessions")
    assert "<h1>Sessions</h1>" in dom
    assert '<a href="/sessions/calc">calc</a>' in dom and '<a href="/sessions/other">' in dom
    assert "What is 17*23? Use the calculator." in dom
    assert png_size(shot) == (1280, 1000)
    dom, _ = page(ui, "/sessions/calc", tmp_path, "session")
    assert f'href="/turns/{filled.calculator}"' in dom
    assert f'href="/turns/{filled.hostile}"' in dom and filled.other not in dom


def test_the_browser_draws_the_calculator_turn_as_a_waterfall(
    ui: str, filled: Filled, tmp_path: Path
) -> None:
    dom, shot = page(ui, f"/turns/{filled.calculator}", tmp_path, "calculator")
    rows = re.findall(r'<div class="wf-row" data-kind="([\w-]+)">', dom)
    assert rows == ["model", "tool", "model"]
    bars = re.findall(r'class="wf-bar wf-(\w+)" style="left:([\d.]+)%;width:([\d.]+)%"', dom)
    assert [kind for kind, _, _ in bars] == ["model", "tool", "model"]
    (_, first_left, first_width), (_, tool_left, _), (_, second_left, second_width) = bars
    # The fixture model thinks 0.2 s per call: two wide bars, one after the other, the tool
    # call (instant) between them.
    assert float(first_width) > 20 and float(second_width) > 20
    assert float(first_left) < float(tool_left) <= float(second_left)
    assert "231 in / 22 out · $0.0003 · tool_use" in dom
    assert "tool · calculator" in dom and "17 multiplied by 23 equals 391." in dom
    assert png_size(shot) == (1280, 1000)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_the_browser_shows_hostile_model_text_as_text(
    ui: str, filled: Filled, tmp_path: Path
) -> None:
    dom, _ = page(ui, f"/turns/{filled.hostile}", tmp_path, "hostile")
    # The prompt's script did not run (the title is ours) and built no element.
    assert re.search(r"<title>Turn \w+ · neuron-turn</title>", dom)
    assert "<script" not in dom and "<img" not in dom
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom


def test_without_the_token_the_browser_gets_nothing(ui: str, tmp_path: Path) -> None:
    base = ui.split("/?token=")[0]
    dom = browse(f"{base}/", tmp_path / "profile-none", "--dump-dom")
    assert "A token is required" in dom and "Sessions" not in dom
