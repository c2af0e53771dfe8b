"""`neuron-temporal payloads prune`: the payload directory's retention from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neuron_orch_temporal._command_line import EXIT_OK, EXIT_PAYLOADS, EXIT_USAGE, main

DAY = 86_400


def _age(path: Path, days: float) -> None:
    """Make `path` look last used `days` ago."""
    then = time.time() - days * DAY
    os.utime(path, (then, then))


def _cli_directory(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A payload directory holding an old payload, a recent one, and a stray file."""
    directory = tmp_path / "payloads"
    old = directory / "ab" / ("ab" + "1" * 62)
    recent = directory / "cd" / ("cd" + "2" * 62)
    stray = directory / "README"
    for path, days in ((old, 100), (recent, 1), (stray, 100)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 1000)
        _age(path, days)
    return old, recent, stray


def test_payloads_prune_removes_old_payloads_and_prints_how_many_and_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, recent, stray = _cli_directory(tmp_path)

    code = main(["payloads", "prune", "--payload-dir", str(old.parents[1]), "--older-than", "90d"])

    assert code == EXIT_OK
    assert capsys.readouterr().out == (
        f"removed 1 file (1,000 bytes) from {old.parents[1]}; kept 1 payload used more recently\n"
    )
    assert not old.exists() and recent.exists() and stray.exists()


def test_payloads_prune_dry_run_lists_each_file_and_removes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, recent, _ = _cli_directory(tmp_path)
    directory = str(old.parents[1])

    code = main(
        ["payloads", "prune", "--payload-dir", directory, "--older-than", "2w", "--dry-run"]
    )

    out = capsys.readouterr().out.splitlines()
    assert code == EXIT_OK
    assert out[0].startswith(f"would remove {old} (1,000 bytes, last used ")
    assert (
        out[1]
        == f"would remove 1 file (1,000 bytes) from {directory}; kept 1 payload used more recently"
    )
    assert old.exists() and recent.exists()


@pytest.mark.parametrize(
    ("directory", "older_than", "said"),
    [
        ("missing", "90d", "it does not exist"),
        ("payloads", "12h", "the least is 1d"),
    ],
)
def test_payloads_prune_exits_with_its_own_code_naming_what_was_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], directory: str, older_than: str, said: str
) -> None:
    old, _, _ = _cli_directory(tmp_path)
    given = str(tmp_path / directory)

    code = main(["payloads", "prune", "--payload-dir", given, "--older-than", older_than])

    err = capsys.readouterr().err
    assert code == EXIT_PAYLOADS and err.startswith("neuron-temporal: error: ") and said in err
    assert old.exists()


def test_payloads_prune_refuses_a_duration_it_cannot_read_as_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["payloads", "prune", "--payload-dir", str(tmp_path), "--older-than", "90 days"])

    assert ended.value.code == EXIT_USAGE
    assert "not a duration: '90 days'" in capsys.readouterr().err


def test_the_console_script_prunes_as_main_does(tmp_path: Path) -> None:
    old, recent, _ = _cli_directory(tmp_path)
    script = Path(sys.executable).with_name("neuron-temporal")

    done = subprocess.run(
        [script, "payloads", "prune", "--payload-dir", old.parents[1], "--older-than", "90d"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("removed 1 file (1,000 bytes)")
    assert not old.exists() and recent.exists()
