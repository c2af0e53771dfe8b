"""`ExternalTool`: a tool described like any other, which nothing here runs."""

from __future__ import annotations

import pytest

from neuron_tool import (
    ExternalTool,
    ExternalToolCallError,
    RunContext,
    ToolInputError,
    ToolRegistrationError,
    ToolRegistry,
    is_external,
    tool,
)


def confirm(question: str, default: bool = False) -> bool:
    """Ask the user to confirm in their browser.

    Args:
        question: The question shown.
        default: The answer preselected.
    """
    raise AssertionError("never runs")


def test_like_describes_the_function_as_tool_would_and_marks_it_external() -> None:
    external = ExternalTool.like(confirm)
    described = tool(confirm)

    assert (external.name, external.description) == ("confirm", described.description)
    assert external.input_schema == described.input_schema
    assert external.output_schema == {"type": "boolean"}
    assert is_external(external)
    assert not is_external(described)


def test_an_external_tool_without_a_schema_takes_an_object_with_no_fields() -> None:
    registry = ToolRegistry([ExternalTool("ping", "Ping the user.")])

    registry.check_input("ping", {})
    assert registry.schemas()[0].input_schema == {"type": "object", "properties": {}}


def test_an_external_tool_asking_for_a_run_context_is_refused() -> None:
    def needs_context(ctx: RunContext[None], text: str) -> str:
        """Needs the run."""
        return text

    with pytest.raises(ToolRegistrationError, match="an external tool takes no RunContext"):
        ExternalTool.like(needs_context)


async def test_calling_an_external_tool_here_fails_naming_it() -> None:
    registry = ToolRegistry([ExternalTool.like(confirm)])

    with pytest.raises(ExternalToolCallError, match="tool 'confirm' is external"):
        await registry.call("confirm", {"question": "sure?"})


def test_the_registry_keeps_the_names_of_its_external_tools() -> None:
    registry = ToolRegistry([tool(confirm, name="local_confirm"), ExternalTool.like(confirm)])
    assert registry.external_names == {"confirm"}

    registry.unregister("confirm")
    assert registry.external_names == frozenset()


def test_check_input_checks_against_the_schema_without_calling() -> None:
    registry = ToolRegistry([ExternalTool.like(confirm)])

    registry.check_input("confirm", {"question": "sure?"})
    with pytest.raises(ToolInputError, match="question"):
        registry.check_input("confirm", {"default": True})


async def test_with_tools_adds_to_a_copy_and_leaves_the_registry_as_it_was() -> None:
    registry = ToolRegistry([tool(confirm, name="local_confirm")])

    offering = registry.with_tools([ExternalTool.like(confirm)])

    assert offering.names() == ["local_confirm", "confirm"]
    assert offering.external_names == {"confirm"}
    assert registry.names() == ["local_confirm"]
    assert registry.external_names == frozenset()
    with pytest.raises(ToolRegistrationError, match="already registered"):
        registry.with_tools([ExternalTool("local_confirm", "Taken.")])
