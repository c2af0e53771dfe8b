"""Reading what the loop keeps in a session's store, with the errors a turn raises for it.

Its history and (`standing`) its standing decisions.
"""

from __future__ import annotations

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    ContextAssemblyError,
    NonRetryableError,
    RetryableError,
    SessionScope,
    StateError,
    StateReader,
)

from ._convert import HistoryFormatError, history_from_json
from .provider import ProviderMessage


async def read_history(state: StateReader, session: str) -> list[ProviderMessage]:
    """Return the history stored for `session` in `state` (empty: none).

    Raises:
        NonRetryableError: the store judged the read (a corrupt or unreadable file).
        RetryableError: the store failed otherwise.
        ContextAssemblyError: the stored history does not parse.
    """
    stored = await read_kept(state, session, HISTORY_KEY, "the history")
    if stored is None:
        return []
    try:
        return history_from_json(stored)
    except HistoryFormatError as exc:
        raise ContextAssemblyError(
            f"the stored history of session {session!r} (key {HISTORY_KEY!r}) "
            f"does not parse, {exc}; refusing to run without the conversation so far"
        ) from exc


async def read_kept(state: StateReader, session: str, key: str, what: str) -> JsonValue | None:
    """Return what `state` keeps under `key` of `session` (`what`, for errors), or None.

    Raises:
        NonRetryableError: the store judged the read (a corrupt or unreadable file).
        RetryableError: the store failed otherwise.
    """
    try:
        return await state.read(SessionScope(id=session), key)
    except StateError as exc:
        # The store judged it (corrupt or unreadable file...): retrying cannot help.
        message = f"reading {what} of session {session!r} failed: {exc}"
        raise NonRetryableError(message) from exc
    except Exception as exc:
        message = f"reading {what} of session {session!r} failed: {exc}"
        raise RetryableError(message) from exc
