"""`neuron-turn ui` in a real browser: headless Chromium loads the pages and screenshots them.

The state file is filled by real turns through the command line (the
README's calculator turn among them), `neuron-turn ui` runs as its own
process, and Chromium (Debian's `chromium`, from scripts/setup.d/test-chromium)
opens the URL it printed, token included, as a user would. Chromium is told
not to reach anything but the viewer. A turn whose prompt holds a PNG shows
it drawn; a hostile page sent with the viewer's Content-Security-Policy
reaches nothing and runs nothing.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

import httpx
import pytest

from layer0 import Base64Source, Content, ImageBlock, TextBlock, TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn
from neuron_turn.testing import ScriptedProvider, text_response

from .conftest import PLUGINS, Filled
from .pngs import read_png, solid_png

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
    with running_ui(filled.path, tmp_path) as url:
        yield url


@contextmanager
def running_ui(state: Path, cwd: Path) -> Iterator[str]:
    """`neuron-turn ui` on `state`, as a process, until Ctrl-C; yields the URL it printed."""
    environment = os.environ | {"NEURON_LOAD_PLUGINS": PLUGINS}
    process = subprocess.Popen(
        [sys.executable, "-m", "neuron_turn", "ui", "--state", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=cwd,
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
    return png_size_of(path.read_bytes())


def png_size_of(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
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


MAGENTA: Final = (255, 0, 255)
PICTURE: Final = solid_png(160, 90, MAGENTA)
"""The PNG a prompt holds: a colour no page of the viewer draws, so it is found in a screenshot."""


@dataclass(frozen=True)
class Pictured:
    """A state file holding one turn whose prompt has `PICTURE` attached."""

    path: Path
    turn: str


@pytest.fixture
def pictured(tmp_path: Path) -> Pictured:
    """A turn run on a state file with a PNG in its prompt, as a user attaches one."""
    path = tmp_path / "pictured.db"
    return Pictured(path, asyncio.run(_run_pictured(path)))


async def _run_pictured(path: Path) -> str:
    async with SqliteStore(path) as store:
        model = ScriptedProvider([text_response("A magenta rectangle.")])
        turn = NeuronTurn(model, state=store)
        picture = ImageBlock(
            source=Base64Source(data=base64.b64encode(PICTURE).decode()), media_type="image/png"
        )
        prompt = Content([TextBlock(text="What colour is this?"), picture])
        await LocalOrchestrator({"main": turn}, store).dispatch(
            "main", TurnInput(message=prompt, trigger="user", session="pictured")
        )
        [summary] = await store.turn_summaries(session="pictured")
        return summary.turn_id


def test_the_browser_draws_a_png_from_the_session_at_its_own_size(
    pictured: Pictured, tmp_path: Path
) -> None:
    with running_ui(pictured.path, tmp_path) as url:
        dom, shot = page(url, f"/turns/{pictured.turn}", tmp_path, "pictured")
    encoded = base64.b64encode(PICTURE).decode()
    assert f'<img src="data:image/png;base64,{encoded}" alt="image (image/png)">' in dom
    assert f"<figcaption>[image image/png] {len(PICTURE)} B</figcaption>" in dom
    # Decoded and drawn: every pixel of the PNG, and only those, is on screen in its colour
    # (the screenshot is at scale 1, so its width is the image's natural width).
    drawn = read_png(shot.read_bytes())
    assert drawn.box_of(MAGENTA) is not None, "the image was not drawn"
    _, _, width, height = drawn.box_of(MAGENTA)  # type: ignore[misc]
    assert (width, height) == png_size_of(PICTURE) == (160, 90)
    assert drawn.count_of(MAGENTA) == 160 * 90


class _Recorder(BaseHTTPRequestHandler):
    """Answers every GET with a little content and records its path on the server."""

    server: _RecordingServer

    def do_GET(self) -> None:
        self.server.seen.append(self.path)
        body, kind = self.server.pages.get(self.path, (b"x", "text/plain"))
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for name, value in self.server.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: what was asked for is in `seen`."""


class _RecordingServer(ThreadingHTTPServer):
    """A loopback server that records the paths asked of it."""

    def __init__(self, pages: dict[str, tuple[bytes, str]], headers: list[tuple[str, str]]) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.pages = pages
        self.headers = headers
        self.seen: list[str] = []

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def recording(
    pages: dict[str, tuple[bytes, str]] | None = None, headers: list[tuple[str, str]] | None = None
) -> Iterator[_RecordingServer]:
    server = _RecordingServer(pages or {}, headers or [])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def _hostile_page(elsewhere: str) -> bytes:
    """A page trying to run script and to load from `elsewhere` every way it can; a data PNG."""
    picture = base64.b64encode(PICTURE).decode()
    return f"""<!DOCTYPE html><html><head><title>kept</title>
<script>document.title = 'ran';</script>
<script src="{elsewhere}/script.js"></script>
<link rel="stylesheet" href="{elsewhere}/style.css">
<style>@import url("{elsewhere}/import.css"); body{{background:url("{elsewhere}/bg.png")}}
@font-face{{font-family:f;src:url("{elsewhere}/font.woff")}} p{{font-family:f}}</style>
</head><body><p>text</p>
<img src="{elsewhere}/image.png"><iframe src="{elsewhere}/frame"></iframe>
<object data="{elsewhere}/object"></object><embed src="{elsewhere}/embed">
<video src="{elsewhere}/video.mp4"></video><audio src="{elsewhere}/audio.mp3"></audio>
<img src="data:image/png;base64,{picture}">
<form action="{elsewhere}/form"></form>
</body></html>""".encode()


def test_the_viewers_content_security_policy_stops_a_page_reaching_or_running_anything(
    ui: str, tmp_path: Path
) -> None:
    answer = httpx.get(ui, follow_redirects=True)
    policy = answer.headers["content-security-policy"]
    with recording() as elsewhere:
        hostile = {"/": (_hostile_page(elsewhere.origin), "text/html; charset=utf-8")}
        with recording(hostile, [("content-security-policy", policy)]) as guarded:
            dom = browse(f"{guarded.origin}/", tmp_path / "profile-csp", "--dump-dom")
        assert elsewhere.seen == [] and "<title>kept</title>" in dom
        # The same page without the policy reaches out and runs its script: the check can fail.
        with recording(hostile) as bare:
            dom = browse(f"{bare.origin}/", tmp_path / "profile-bare", "--dump-dom")
        assert "/image.png" in elsewhere.seen and "<title>ran</title>" in dom
