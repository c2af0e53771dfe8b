"""A tool's structured content that does not match its output schema, or an output schema that
is no JSON Schema, is an `MCPInvalidAnswerError` of a few words: where, which rule, and the
start of what came. Quoted whole, a server's megabytes would go to the model and the logs."""

from __future__ import annotations

import pytest

from neuron_tool.mcp import MCPClient, MCPInvalidAnswerError

from .mcp_servers.paths import script

SIZE = 1_000_000


def _client() -> MCPClient:
    command, *args = script("unmatched")
    return MCPClient.stdio(command, [*args, str(SIZE)], name="unmatched")


async def test_structured_content_not_matching_its_schema_is_refused_in_a_few_words() -> None:
    async with _client() as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.call_tool("count", {})
    reason = caught.value.reason
    assert reason.startswith(
        "its structured content does not match the tool's output schema at $.n:"
        " type 'integer' is not met (got 'xxxx"
    )
    assert len(reason) < 300


async def test_an_output_schema_that_is_no_json_schema_is_refused_in_a_few_words() -> None:
    async with _client() as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.call_tool("broken", {})
    reason = caught.value.reason
    assert reason.startswith(
        "the tool's output schema is not a JSON Schema at $.properties.n.enum:"
        " type 'array' is not met (got 'xxxx"
    )
    assert len(reason) < 300
