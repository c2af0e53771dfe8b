from __future__ import annotations

from pathlib import Path

import pytest

from neuron_state_sqlite import ENV_VAR, SqliteStore, default_path
from neuron_state_sqlite.paths import _default_path

HOME = Path("/home/user")


def test_neuron_state_path_overrides_everything(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "custom.db"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "custom.db"


def test_xdg_data_home_is_used_when_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "neuron-turn" / "state.db"


async def test_a_store_without_a_path_uses_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "deep" / "env.db"))
    async with SqliteStore() as store:
        await store.write("global", "k", 1)
        assert store.path == tmp_path / "deep" / "env.db"
    assert (tmp_path / "deep" / "env.db").is_file()


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({}, "linux", HOME / ".local/share/neuron-turn/state.db"),
        ({"XDG_DATA_HOME": "/xdg"}, "linux", Path("/xdg/neuron-turn/state.db")),
        ({"XDG_DATA_HOME": ""}, "linux", HOME / ".local/share/neuron-turn/state.db"),
        ({"XDG_DATA_HOME": "relative"}, "linux", HOME / ".local/share/neuron-turn/state.db"),
        ({}, "darwin", HOME / "Library/Application Support/neuron-turn/state.db"),
        ({"LOCALAPPDATA": "/appdata"}, "win32", Path("/appdata/neuron-turn/state.db")),
        ({}, "win32", HOME / "AppData/Local/neuron-turn/state.db"),
        ({ENV_VAR: "/x/y.db", "XDG_DATA_HOME": "/xdg"}, "darwin", Path("/x/y.db")),
        ({ENV_VAR: "~/s.db"}, "linux", Path("~/s.db").expanduser()),
        ({ENV_VAR: ""}, "linux", HOME / ".local/share/neuron-turn/state.db"),
    ],
)
def test_default_path_per_platform(environ: dict[str, str], platform: str, expected: Path) -> None:
    assert _default_path(environ, platform=platform, home=HOME) == expected
