"""A resource template's completion names only variables of its URI template, or nothing is sent.

RFC 6570 names a template's variables inside braces, after an optional operator
and with optional modifiers; `MCPClient.complete` checks the argument and the
context's names against them before any request, as it checks a prompt's.
"""

from __future__ import annotations

import sys

import pytest

from neuron_tool.mcp import (
    MCPClient,
    MCPCompletion,
    MCPPromptArgumentError,
    MCPResourceTemplate,
    MCPUndeclaredArgumentError,
)
from neuron_tool.mcp.resources import uri_variables

from .changes import changing, counts

NOTES = MCPResourceTemplate(server="changing", uri_template="note://{name}", name="note")


@pytest.mark.parametrize(
    ("template", "variables"),
    [
        ("note://{name}", ("name",)),
        ("files://{+path}", ("path",)),
        ("search://{?q,lang}", ("q", "lang")),
        ("x://{#frag}{.ext}{/seg*}{;p}{&page:3}", ("frag", "ext", "seg", "p", "page")),
        ("repo://{owner}/{repo}/{+path}{?ref}", ("owner", "repo", "path", "ref")),
        ("twice://{id}/{id}", ("id",)),
        ("plain://no/variables", ()),
        ("empty://{}", ()),
    ],
)
def test_a_uri_templates_variables_are_its_names_without_operators_or_modifiers(
    template: str, variables: tuple[str, ...]
) -> None:
    assert uri_variables(template) == variables
    assert MCPResourceTemplate("s", template, "t").variables == variables


async def test_a_variable_of_the_template_is_completed_and_another_name_refused_unsent() -> None:
    async with changing("stdio") as client:
        completed = await client.complete(NOTES, "name", "cur")
        with pytest.raises(MCPUndeclaredArgumentError) as completing:
            await client.complete(NOTES, "id", "cur")
        with pytest.raises(MCPUndeclaredArgumentError) as in_context:
            await client.complete(NOTES, "name", "cur", {"folder": "home"})
        asked = await counts(client)

    assert completed == MCPCompletion(values=("current",), total=1, has_more=False)
    assert asked["completion/complete"] == 1  # the refused two were never sent
    assert (completing.value.arguments, completing.value.declared) == (("id",), ("name",))
    assert in_context.value.arguments == ("folder",)
    assert isinstance(completing.value, MCPPromptArgumentError)
    assert completing.value.of == "resource template"
    assert str(completing.value) == (
        "resource template 'note://{name}' of MCP server 'changing' does not declare the"
        " argument 'id' (it declares 'name'); nothing was sent"
    )


async def test_a_template_argument_is_checked_before_the_server_is_even_started() -> None:
    # A server that cannot start: had it been started, this would be a connection error.
    client = MCPClient.stdio(sys.executable, ["-c", "raise SystemExit(3)"], name="never")
    template = MCPResourceTemplate("never", "files://{+path}{?q,lang}", "files")

    with pytest.raises(MCPUndeclaredArgumentError) as caught:
        await client.complete(template, "query", "x", {"lang": "en", "owner": "me"})

    assert caught.value.arguments == ("query", "owner")
    assert caught.value.declared == ("path", "q", "lang")
    assert str(caught.value) == (
        "resource template 'files://{+path}{?q,lang}' of MCP server 'never' does not declare"
        " the arguments 'query', 'owner' (it declares 'path', 'q', 'lang'); nothing was sent"
    )


async def test_a_template_without_variables_takes_no_argument() -> None:
    client = MCPClient.stdio(sys.executable, ["-c", "raise SystemExit(3)"], name="never")
    fixed = MCPResourceTemplate("never", "notes://today", "today")

    with pytest.raises(MCPUndeclaredArgumentError, match=r"\(it declares none\)"):
        await client.complete(fixed, "day", "mon")
