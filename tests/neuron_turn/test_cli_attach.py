"""`run --attach PATH`: files sent with the prompt, kept in the session; bad files refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from neuron_turn.cli import main
from neuron_turn.cli._attachments import MAX_BYTES

pytestmark = pytest.mark.usefixtures("fixture_plugins")

RUN = ["run", "Sum these up", "--model", "fixture:echo"]


def test_attached_files_go_with_the_prompt_and_stay_in_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    notes, report = tmp_path / "notes.md", tmp_path / "report.pdf"
    notes.write_text("# Notes\nship on Friday\n", encoding="utf-8")
    report.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3 a report")

    assert main([*RUN, "--attach", str(notes), "--attach", str(report), "--session", "a1"]) == 0
    capsys.readouterr()

    assert main(["history", "a1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "user (turn 1): Sum these up [document notes.md] [document report.pdf]"
    )
    assert main(["history", "a1", "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)[0]["content"]
    assert [b.get("data", {}).get("media_type") for b in blocks] == [
        None,
        "text/plain",
        "application/pdf",
    ]


IMAGES = {
    "chart.png": (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
    "photo.jpg": (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
    "anim.gif": (b"GIF89a\x01\x00", "image/gif"),
    "pic.webp": (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    "named.txt": (b"\x89PNG\r\n\x1a\n\x00\x01", "image/png"),  # by its bytes, not its name
}


def test_images_go_as_images_known_by_their_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    attach: list[str] = []
    for name, (data, _) in IMAGES.items():
        (tmp_path / name).write_bytes(data)
        attach += ["--attach", str(tmp_path / name)]

    assert main([*RUN, *attach, "--session", "i1"]) == 0
    capsys.readouterr()

    assert main(["history", "i1", "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)[0]["content"][1:]
    assert [(b["type"], b["media_type"]) for b in blocks] == [
        ("image", media_type) for _, media_type in IMAGES.values()
    ]
    assert main(["history", "i1"]) == 0
    assert "[image image/webp]" in capsys.readouterr().out


MEDIA = {
    "voice.wav": (b"RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav"),
    "song.mp3": (b"ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg"),
    "frame.mp3": (b"\xff\xfb\x90\x64\x00\x00", "audio/mpeg"),
    "clip.aac": (b"\xff\xf1\x50\x80\x00\x1f", "audio/aac"),
    "take.flac": (b"fLaC\x00\x00\x00\x22", "audio/flac"),
    "id3.txt": (b"ID3 tags, explained", "text/plain"),  # text that starts like an MP3
    "talk.ogg": (b"OggS\x00\x02\x00\x00", "audio/ogg"),
    "memo.aiff": (b"FORM\x00\x00\x00\x00AIFFCOMM", "audio/aiff"),
    "memo.m4a": (b"\x00\x00\x00\x20ftypM4A \x00\x00", "audio/mp4"),
    "film.mp4": (b"\x00\x00\x00\x18ftypisom\x00\x00", "video/mp4"),
    "film.mov": (b"\x00\x00\x00\x14ftypqt  \x00\x00", "video/quicktime"),
    "phone.3gp": (b"\x00\x00\x00\x14ftyp3gp5\x00\x00", "video/3gpp"),
    "web.webm": (b"\x1a\x45\xdf\xa3\x01\x00\x00\x00", "video/webm"),
    "old.avi": (b"RIFF\x24\x00\x00\x00AVI LIST", "video/avi"),
    "tv.mpg": (b"\x00\x00\x01\xba\x44\x00", "video/mpeg"),
}


def test_audio_and_video_go_as_documents_of_their_media_type_known_by_their_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    attach: list[str] = []
    for name, (data, _) in MEDIA.items():
        (tmp_path / name).write_bytes(data)
        attach += ["--attach", str(tmp_path / name)]

    assert main([*RUN, *attach, "--session", "m1"]) == 0
    capsys.readouterr()

    assert main(["history", "m1", "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)[0]["content"][1:]
    assert [(b["data"]["media_type"], b["data"]["name"]) for b in blocks] == [
        (media_type, name) for name, (_, media_type) in MEDIA.items()
    ]
    assert main(["history", "m1"]) == 0
    listed = capsys.readouterr().out.splitlines()[0]
    assert "[audio voice.wav]" in listed and "[video film.mp4]" in listed
    assert "[document id3.txt]" in listed


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"PK\x03\x04\x00\xff", "is not an image (PNG, JPEG, GIF, WebP), a PDF, audio (WAV"),
        (b"BM6\x00\x00\x00\x00\xff", "is not an image (PNG, JPEG, GIF, WebP), a PDF"),
        (None, "No such file or directory"),
    ],
    ids=["zip", "bmp", "missing"],
)
def test_a_file_that_cannot_be_sent_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, said: str
) -> None:
    path = tmp_path / "file.bin"
    if content is not None:
        path.write_bytes(content)
    assert main([*RUN, "--attach", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--attach {str(path)!r}" in err and said in err


def test_a_file_larger_than_the_apis_take_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as file:
        file.truncate(MAX_BYTES + 1)  # sparse: no 32 MiB written
    assert main([*RUN, "--attach", str(huge)]) == 2
    assert f"is {MAX_BYTES + 1:,} bytes; the model APIs take at most {MAX_BYTES:,}" in (
        capsys.readouterr().err
    )


def test_a_file_name_that_is_not_utf8_is_kept_readable_in_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    named = os.fsencode(tmp_path) + b"/caf\xe9.txt"  # Latin-1, not UTF-8
    with open(named, "wb") as file:
        file.write(b"notes")
    assert main([*RUN, "--attach", os.fsdecode(named), "--session", "n1"]) == 0
    capsys.readouterr()
    assert main(["history", "n1"]) == 0
    assert "[document caf\ufffd.txt]" in capsys.readouterr().out
