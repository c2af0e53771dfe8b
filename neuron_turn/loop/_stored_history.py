"""Reading a session's stored history, with the errors a turn raises for it."""

from __future__ import annotations

from layer0 import (
    ContextAssemblyError,
    NonRetryableError,
    RetryableError,
    SessionScope,
    StateError,
    StateReader,
)

from ._convert import HistoryFormatError, history_from_json
from ._run import HISTORY_KEY
from .provider import ProviderMessage


async def read_history(state: StateReader, session: str) -> list[ProviderMessage]:
    """Return the history stored for `session` in `state` (empty: none).

    Raises:
        NonRetryableError: the store judged the read (a corrupt or unreadable file).
        RetryableError: the store failed otherwise.
        ContextAssemblyError: the stored history does not parse.
    """
    try:
        stored = await state.read(SessionScope(id=session), HISTORY_KEY)
    except StateError as exc:
        # The store judged it (corrupt or unreadable file...): retrying cannot help.
        message = f"reading the history of session {session!r} failed: {exc}"
        raise NonRetryableError(message) from exc
    except Exception as exc:
        message = f"reading the history of session {session!r} failed: {exc}"
        raise RetryableError(message) from exc
    if stored is None:
        return []
    try:
        return history_from_json(stored)
    except HistoryFormatError as exc:
        raise ContextAssemblyError(
            f"the stored history of session {session!r} (key {HISTORY_KEY!r}) "
            f"does not parse, {exc}; refusing to run without the conversation so far"
        ) from exc
