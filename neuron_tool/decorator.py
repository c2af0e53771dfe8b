"""`@tool`: turn a typed function, sync or async, into a `FunctionTool`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

from .prepare import ToolPrepare
from .tool import FunctionTool, ToolAnnotations


@overload
def tool(function: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    requires_isolation: bool = False,
    prepare: ToolPrepare | None = None,
    strict: bool | None = None,
    sequential: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    requires_isolation: bool = False,
    prepare: ToolPrepare | None = None,
    strict: bool | None = None,
    sequential: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a `FunctionTool` from a function; use bare (`@tool`) or with options (`@tool(...)`).

    The name defaults to the function's name, the description to its docstring
    without the Args/Returns sections, and each parameter's description to its
    entry under `Args:`. The input schema comes from the signature via pydantic.

    Args:
        function: The function, when used bare.
        name: The tool name, instead of the function's name.
        description: The description, instead of the docstring's.
        annotations: MCP behaviour hints for the tool.
        requires_isolation: Run only inside an environment's sandbox (`neuron_tool.isolation`).
        prepare: Decide before each model call whether and as what the tool is offered,
            from the run's context (`neuron_tool.prepare`).
        strict: Ask the provider to constrain the model's input to the schema as it
            decodes it (`neuron_tool.strict`); a provider without strict mode refuses it.
        sequential: Run it alone: a model answer that calls it has all its calls run one
            after another, in the model's order, not concurrently (a tool sharing state
            or a rate-limited API with the others).

    Raises:
        ToolRegistrationError: The signature cannot be described as a JSON Schema.
    """
    if function is not None:
        return FunctionTool(
            function,
            name=name,
            description=description,
            annotations=annotations,
            requires_isolation=requires_isolation,
            prepare=prepare,
            strict=strict,
            sequential=sequential,
        )

    def decorate(function: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            function,
            name=name,
            description=description,
            annotations=annotations,
            requires_isolation=requires_isolation,
            prepare=prepare,
            strict=strict,
            sequential=sequential,
        )

    return decorate
