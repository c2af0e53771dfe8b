"""`run --save-images DIR`: the images a model made, written to files; named when not saved."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from neuron_fixture_plugin.provider import PIXEL

from layer0 import Base64Source, Content, ImageBlock, TextBlock, TurnMetadata, TurnOutput, usd
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_IMAGES, EXIT_USAGE
from neuron_turn.cli._images import ImageSaveError, save_images

pytestmark = pytest.mark.usefixtures("fixture_plugins")

PAINT = ["run", "Draw a cat", "--model", "fixture:painter", "--hosted-tool", "image_generation"]


def test_the_answers_images_are_written_whole_and_named_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "images"  # made, parents too

    assert main([*PAINT, "--save-images", str(out), "--session", "c1"]) == 0

    captured = capsys.readouterr()
    assert captured.out.strip() == "Here is a cat."
    (written,) = sorted(out.iterdir())
    assert written.suffix == ".png"
    assert written.read_bytes() == base64.b64decode(PIXEL)
    assert f"image 1: {written}" in captured.err
    # An image by URL is named by its URL, not fetched.
    assert "image 2: https://images.example.com/cat.webp" in captured.err


def test_without_the_flag_the_images_are_named_not_dropped_unsaid(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(PAINT) == 0

    assert "the answer holds 2 images; --save-images DIR writes them to files" in (
        capsys.readouterr().err
    )


def test_json_output_stays_json_and_the_images_are_saved_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*PAINT, "--json", "--save-images", str(tmp_path)]) == 0

    captured = capsys.readouterr()
    assert TurnOutput.model_validate_json(captured.out).message.blocks[1].type == "image"
    assert len(list(tmp_path.glob("*.png"))) == 1


def test_an_image_that_cannot_be_written_exits_with_its_own_code_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = ["run", "Draw", "--model", "fixture:painter-broken"]
    code = main([*broken, "--hosted-tool", "image_generation", "--save-images", str(tmp_path)])

    assert code == EXIT_IMAGES
    err = capsys.readouterr().err
    assert "--save-images: image 1 of the answer is not base64" in err
    assert "the session's history keeps its images (neuron-turn history" in err
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".png"] == []


def test_a_file_given_as_the_directory_is_refused_before_the_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")

    with pytest.raises(SystemExit) as exited:
        main([*PAINT, "--save-images", str(plain)])

    assert exited.value.code == EXIT_USAGE
    assert "--save-images" in capsys.readouterr().err


def test_a_write_that_fails_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = ImageBlock(source=Base64Source(data=PIXEL), media_type="image/png")
    output = TurnOutput(
        message=Content([TextBlock(text="a cat"), image]),
        exit_reason="complete",
        metadata=TurnMetadata(
            tokens_in=0, tokens_out=0, cost=usd("0"), turns_used=1, tools_called=[], duration=1
        ),
    )

    def full_disk(source: str, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(ImageSaveError, match=r"cannot write .*t-1\.png: No space left on device"):
        save_images(output, tmp_path, "t")
    assert list(tmp_path.iterdir()) == []
