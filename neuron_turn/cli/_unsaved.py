"""An exchange the state refused to keep, kept in a file so that none of it is lost.

When a turn ran but the state store refused its writes, even after the
orchestrator asked again (a full disk, a database gone: the local
orchestrator's `MemoryNotAppliedError`, which holds them), `run` and `chat`
still show the answer, and write those writes (the history append with the
exchange's messages, the memory the turn wrote) to
`$XDG_STATE_HOME/neuron-turn/unsaved/<turn id>.json` (`~/.local/state/...`
without it; `$NEURON_UNSAVED_DIR` overrides both), away from the state that
refused them. `neuron-turn restore FILE` writes them once the state takes
writes again (`neuron_turn.cli._restore`).

The file holds the effects in the layer0 wire form (the history append as its
`custom` effect), so any orchestrator or language reads it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TypeGuard

from pydantic import TypeAdapter, ValidationError

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    Effect,
    HistoryAppend,
    TurnOutput,
    WriteMemoryEffect,
)

__all__ = [
    "UNSAVED_DIR_VAR",
    "Unsaved",
    "UnsavedFileError",
    "keep_unsaved",
    "read_unsaved",
    "unsaved_dir",
    "unsaved_of",
]

UNSAVED_DIR_VAR: Final = "NEURON_UNSAVED_DIR"
"""The environment variable naming the directory unsaved exchanges are written to."""

_FORMAT: Final = "neuron-turn unsaved exchange"
_VERSION: Final = 1
_EFFECTS: Final = TypeAdapter(list[Effect])
# A turn id names the file only when it cannot reach outside the directory.
_SAFE_STEM: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")

MemoryEffect = WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend
_WRITES: Final = (WriteMemoryEffect, DeleteMemoryEffect, HistoryAppend)


class UnsavedFileError(ValueError):
    """A file given to `restore` is not an unsaved exchange this version can read."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(f"{path}: {reason}")


class Unsaved:
    """What a refused turn left: its writes, in order, and its answer."""

    def __init__(self, effects: Sequence[MemoryEffect], output: TurnOutput | None) -> None:
        self.effects = tuple(effects)
        self.output = output

    @property
    def session(self) -> str | None:
        """The session the turn ran in, from its history append (None without one)."""
        append = self._append()
        return None if append is None else append.session

    @property
    def turn_id(self) -> str | None:
        """The turn's id, from its history append (None for a turn without a session)."""
        append = self._append()
        return None if append is None else append.turn_id

    def _append(self) -> HistoryAppend | None:
        return next((e for e in self.effects if isinstance(e, HistoryAppend)), None)


def unsaved_of(error: BaseException) -> Unsaved | None:
    """The writes a dispatch failed to keep, when `error` (or what it wraps) holds them.

    Read by shape: the error is the orchestrator plugin's (the local one's
    `MemoryNotAppliedError`, a `DispatchFailed` with `effects`), which the
    command line does not import.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        effects = getattr(current, "effects", None)
        if isinstance(current, DispatchFailed) and _writes(effects):
            output = getattr(current, "output", None)
            return Unsaved(effects, output if isinstance(output, TurnOutput) else None)
        current = current.__cause__ or current.__context__
    return None


def _writes(effects: object) -> TypeGuard[tuple[MemoryEffect, ...]]:
    return (
        isinstance(effects, tuple)
        and bool(effects)
        and all(isinstance(e, _WRITES) for e in effects)
    )


def unsaved_dir() -> Path:
    """`$NEURON_UNSAVED_DIR`, else `unsaved` in the user's state directory (XDG)."""
    given = os.environ.get(UNSAVED_DIR_VAR)
    if given:
        return Path(given)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "neuron-turn" / "unsaved"


def keep_unsaved(unsaved: Unsaved, *, state: str) -> Path:
    """Write `unsaved` to a new file of `unsaved_dir()`, whole or not at all; return its path.

    `state` names the state that refused it (shown, without a password), for
    the person restoring it.

    Raises:
        OSError: the file could not be written (nothing is left behind).
    """
    directory = unsaved_dir()
    directory.mkdir(parents=True, exist_ok=True)
    turn_id = unsaved.turn_id or ""
    stem = turn_id if _SAFE_STEM.fullmatch(turn_id) else "turn"
    text = _text(unsaved, state)
    handle, temporary = tempfile.mkstemp(prefix=f".{stem}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        return _linked(temporary, directory, stem)
    finally:
        os.unlink(temporary)


def read_unsaved(path: Path) -> tuple[str, tuple[MemoryEffect, ...]]:
    """The state named and the writes kept in the unsaved exchange at `path`.

    Raises:
        UnsavedFileError: not such a file, another version's, or effects that are no writes.
        OSError: the file could not be read.
    """
    if not stat.S_ISREG(path.stat().st_mode):
        # A FIFO or a device (`/dev/zero`) would be read for ever.
        raise UnsavedFileError(path, "not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UnsavedFileError(path, f"not UTF-8 text (byte {exc.start})") from None
    try:
        body: Any = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UnsavedFileError(path, f"not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != _FORMAT:
        raise UnsavedFileError(path, "not an unsaved exchange written by neuron-turn")
    if body.get("version") != _VERSION:
        raise UnsavedFileError(
            path, f"written in version {body.get('version')!r} of the format; this reads {_VERSION}"
        )
    try:
        effects = _EFFECTS.validate_python(body.get("effects"))
    except ValidationError as exc:
        raise UnsavedFileError(path, f"its effects do not read: {exc.errors()[0]['msg']}") from None
    state = body.get("state")
    return (state if isinstance(state, str) else ""), tuple(_memory(path, e) for e in effects)


def _text(unsaved: Unsaved, state: str) -> str:
    body = {
        "format": _FORMAT,
        "version": _VERSION,
        "state": state,
        "effects": [_wire(effect) for effect in unsaved.effects],
    }
    return json.dumps(body, ensure_ascii=False, indent=1)


def _wire(effect: MemoryEffect) -> Any:
    if isinstance(effect, HistoryAppend):
        return effect.effect().model_dump(mode="json")
    return effect.model_dump(mode="json")


def _memory(path: Path, effect: Effect) -> MemoryEffect:
    if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect):
        return effect
    if isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
        try:
            append = HistoryAppend.from_effect(effect)
        except ValidationError as exc:
            raise UnsavedFileError(path, f"a history append does not read: {exc}") from None
        # The turn ran: its exchange goes after whatever the session gained since.
        return append.model_copy(update={"expected_length": None})
    raise UnsavedFileError(path, f"holds a {type(effect).__name__}, which is no state write")


def _linked(temporary: str, directory: Path, stem: str) -> Path:
    """Link the written file under the first free name: never over another one."""
    for count in range(1, 1000):
        target = directory / (f"{stem}.json" if count == 1 else f"{stem}-{count}.json")
        try:
            os.link(temporary, target)
        except FileExistsError:
            continue
        return target
    raise FileExistsError(f"{directory}: 999 unsaved exchanges of turn {stem} already")


def unsaved_line(
    unsaved: Unsaved, error: BaseException, *, state: str
) -> tuple[bool, str, str | None]:
    """Keep `unsaved` in a file; return whether it was, the error line, and a last resort.

    Why here: the one place that words it for `run` and `chat` alike. When
    even the file cannot be written, the last resort is the file's text, for
    the caller to print whole after the line, so that what the turn did is
    still not lost.
    """
    cause = _cause(error)
    try:
        path = keep_unsaved(unsaved, state=state)
    except OSError as exc:
        return (
            False,
            (
                f"the state refused this turn's history and memory ({cause}), and writing them "
                f"to {unsaved_dir()} failed too ({exc.strerror or type(exc).__name__}); the next "
                "lines are that file: save them to a file by hand, then `neuron-turn restore FILE`"
            ),
            _text(unsaved, state),
        )
    return (
        True,
        (
            f"the turn ran, but the state refused its history and memory ({cause}); they are "
            f"kept in {path}: `neuron-turn restore {path}` writes them once the state takes "
            "writes again"
        ),
        None,
    )


def _cause(error: BaseException) -> str:
    """The store's own words for why it refused (the error the orchestrator wrapped)."""
    current: BaseException = error
    while current.__cause__ is not None:
        current = current.__cause__
    attempts = getattr(error, "attempts", None)
    tries = f", asked {attempts} times" if isinstance(attempts, int) and attempts > 1 else ""
    return f"{type(current).__name__}: {current}{tries}"
