"""The `TurnInput` of a `run` call: a message, or decisions resuming a paused run."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from layer0 import Content, SessionId, TurnConfig, TurnInput

from .approval import DECISIONS_KEY, Decision
from .message_history import check_history
from .provider import ProviderMessage
from .run_result import RunArgumentsError

__all__ = ["given_history", "run_input"]


def run_input(
    message: str | Content | None,
    *,
    session: SessionId | None,
    message_history: Sequence[ProviderMessage] | None,
    decisions: Sequence[Decision] | None,
    config: TurnConfig | None,
    metadata: JsonValue,
) -> tuple[TurnInput, list[ProviderMessage] | None]:
    """Return the input `run` executes, and the checked history it was given (None: none).

    Raises:
        RunArgumentsError: the arguments do not make one run (named which and why).
        MessageHistoryError: `message_history` holds what is no message.
    """
    history = given_history(session, message_history)
    if decisions is None:
        if message is None:
            raise RunArgumentsError(
                "run needs a message, or decisions= to resume a run paused for approval"
            )
        return _input(message, session, config, metadata), history
    if message is not None:
        raise RunArgumentsError(
            "a resume adds the decided calls' results, not a message: give decisions= "
            "without a message, then ask the next question in a run of its own"
        )
    if session is None and history is None:
        raise RunArgumentsError(
            "decisions= resume a paused run: give its session= or its "
            "message_history= (the paused result's all_messages())"
        )
    return _input(Content(""), session, config, _with_decisions(metadata, decisions)), history


def given_history(
    session: SessionId | None, message_history: Sequence[ProviderMessage] | None
) -> list[ProviderMessage] | None:
    """The checked history a run was given, which it reads instead of a session's (None: none).

    Raises:
        RunArgumentsError: a session beside it.
        MessageHistoryError: it holds what is no message of a history.
    """
    if message_history is None:
        return None
    if session is not None:
        raise RunArgumentsError(
            "give a session or message_history=, not both: a session's history is read "
            "from the turn's state store"
        )
    return check_history(message_history)


def _input(
    message: str | Content,
    session: SessionId | None,
    config: TurnConfig | None,
    metadata: JsonValue,
) -> TurnInput:
    return TurnInput(
        message=message, trigger="user", session=session, config=config, metadata=metadata
    )


def _with_decisions(metadata: JsonValue, decisions: Sequence[Decision]) -> JsonValue:
    """`metadata` with `decisions` under `DECISIONS_KEY`, as `resume_input` writes them."""
    if metadata is not None and not isinstance(metadata, dict):
        raise RunArgumentsError(
            f"metadata beside decisions= must be an object, not {type(metadata).__name__}"
        )
    if metadata is not None and DECISIONS_KEY in metadata:
        raise RunArgumentsError(
            f"decisions are given twice: as decisions= and in metadata[{DECISIONS_KEY!r}]"
        )
    if not isinstance(decisions, Sequence) or not all(isinstance(d, Decision) for d in decisions):
        raise RunArgumentsError("decisions= must be a sequence of Decision")
    return {**(metadata or {}), DECISIONS_KEY: [d.model_dump(mode="json") for d in decisions]}
