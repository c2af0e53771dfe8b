"""`neuron-temporal payloads prune --older-than` past what a duration holds is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_orch_temporal._command_line import EXIT_USAGE, main


@pytest.mark.parametrize("older_than", ["99999999999999d", "1" * 5000 + "s", "9" * 30 + "w"])
def test_an_age_too_long_to_hold_is_a_usage_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], older_than: str
) -> None:
    (tmp_path / "payloads").mkdir()
    argv = ["payloads", "prune", "--payload-dir", str(tmp_path / "payloads")]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--older-than", older_than, "--dry-run"])
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "argument --older-than: too long" in err and "Traceback" not in err
    assert len(err) < 400  # the 5,000 digits are not echoed back
