"""External tools: tools the model calls and the turn's caller carries out.

Why: some calls can only be made outside the turn: in the user's browser (a
frontend tool), on another machine, by a job that takes hours, by a person.
pydantic-ai calls them deferred tools (`ExternalToolset`). To the model an
external tool is like any other; when it calls one, `NeuronTurn` checks the
input against the tool's schema and, instead of running anything, pauses the
turn as it does for a call waiting for approval: `neuron_turn.pending_approvals`
lists the call with `external=True`, and the caller resumes the session with
the call's output (`neuron_turn.Decision.answer`) or a denial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NoReturn

from pydantic import JsonValue

from .errors import ExternalToolCallError, ToolRegistrationError
from .tool import FunctionTool, ToolAnnotations

__all__ = ["ExternalTool", "is_external"]

_NO_INPUT: Final[dict[str, JsonValue]] = {"type": "object", "properties": {}}


class ExternalTool:
    """A tool the model may call whose calls the turn hands to its caller, unrun.

    The registry checks its schema like any tool's; `NeuronTurn` checks each
    call's input against it before pausing, so the caller only ever gets input
    that fits. Calling it directly raises `ExternalToolCallError`: nothing in
    this process can carry it out.
    """

    __slots__ = ("annotations", "description", "input_schema", "name", "output_schema")

    external: Final = True
    """Marks the tool as one whose calls pause the turn (see `is_external`)."""

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: dict[str, JsonValue] | None = None,
        *,
        output_schema: dict[str, JsonValue] | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> None:
        """Describe an external tool; `input_schema` defaults to an object with no fields."""
        self.name: Final = name
        self.description: Final = description
        self.input_schema: Final = dict(_NO_INPUT) if input_schema is None else input_schema
        self.output_schema: Final = output_schema
        self.annotations: Final = annotations

    @classmethod
    def like(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> ExternalTool:
        """An external tool described as `@tool` would describe `function`, which never runs.

        Why: a typed signature and a docstring are the easiest way to write a
        schema, and the one the other tools of a registry are written in.

        Raises:
            ToolRegistrationError: the signature cannot be described, or asks for
                a `RunContext` (an external tool runs where there is none).
        """
        described = FunctionTool(function, name=name, description=description)
        if described.takes_context:
            raise ToolRegistrationError(
                described.name, "an external tool takes no RunContext: it does not run here"
            )
        return cls(
            described.name,
            described.description,
            described.input_schema,
            output_schema=described.output_schema,
            annotations=annotations,
        )

    def __repr__(self) -> str:
        return f"ExternalTool(name={self.name!r})"

    async def call(self, input: JsonValue) -> NoReturn:
        """Refuse: the caller of the turn carries out this tool's calls.

        Raises:
            ExternalToolCallError: always.
        """
        raise ExternalToolCallError(self.name)


def is_external(tool: object) -> bool:
    """Return whether `tool` is external: its calls pause the turn for its caller to make."""
    return getattr(tool, "external", False) is True
