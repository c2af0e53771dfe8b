"""`ModelRetry`: the signal a tool raises to ask the model to try again."""

from __future__ import annotations


class ModelRetry(Exception):
    """Raised by a tool to send `hint` back to the model so it can retry the call.

    It derives from `Exception`, outside the `ToolError` root, so that
    `except ToolError` never swallows it and the registry passes it through
    untouched.
    """

    def __init__(self, hint: str) -> None:
        self.hint = hint
        super().__init__(hint)
