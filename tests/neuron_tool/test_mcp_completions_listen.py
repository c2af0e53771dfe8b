"""`MCPClient.complete` on MCP 2026-07-28: answers whose counts MCP forbids are refused.

MCP caps `completion.values` at 100 and has `total` count all there are. The
handshake era's tests are in `test_mcp_completions`; these are against the real
changing server over stdio and loopback HTTP speaking 2026-07-28, whose
`UNCHECKED` completions are sent past the MCP SDK's own check of a server's
answers, as a server on another SDK (or none) might send them.
"""

from __future__ import annotations

import pytest

from neuron_tool.mcp import MCPCompletion, MCPInvalidAnswerError, MCPPrompt

from .changes import MODERN, changing, counts

GREET = MCPPrompt(server="changing", name="greet")


@pytest.fixture(params=MODERN)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


async def test_more_than_100_values_is_an_invalid_answer_and_the_session_goes_on(
    transport: str,
) -> None:
    async with changing(transport) as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(GREET, "style", "over")
        after = await client.complete(GREET, "style", "fu")
        asked = await counts(client)

    assert caught.value.what == "the completion of argument 'style' of prompt 'greet'"
    # On 2026-07-28 the SDK's model of the answer refuses it before our own check
    # does, in words of its own: either names the field and the count.
    assert caught.value.reason.startswith("completion.values")
    assert "101" in caught.value.reason
    assert after.values == ("funny",)
    assert asked["completion/complete"] == 2


async def test_exactly_100_values_and_more_to_come_are_passed_on(transport: str) -> None:
    async with changing(transport) as client:
        completion = await client.complete(GREET, "style", "hundred")

    values = tuple(f"v{index}" for index in range(100))
    assert completion == MCPCompletion(values=values, total=250, has_more=True)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("below", "completion.total is 2, fewer than the 3 values it sent"),
        ("negative", "completion.total is -1, fewer than the 0 values it sent"),
    ],
)
async def test_a_total_below_the_values_sent_is_an_invalid_answer_and_the_session_goes_on(
    transport: str, value: str, reason: str
) -> None:
    async with changing(transport) as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(GREET, "style", value)
        after = await client.complete(GREET, "style", "pl")

    assert caught.value.reason == reason
    assert after == MCPCompletion(values=("plain",), total=1, has_more=False)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (
            "fraction",
            "completion.total: Input should be a valid integer, got a number with a fractional"
            " part (got 2.5)",
        ),
        (
            "text",
            "completion.total: Input should be a valid integer, unable to parse string as an"
            " integer (got 'many')",
        ),
    ],
)
async def test_a_total_that_is_no_integer_is_an_invalid_answer_naming_it(
    transport: str, value: str, reason: str
) -> None:
    async with changing(transport) as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(GREET, "style", value)
        after = await client.complete(GREET, "style", "fu")

    assert caught.value.reason == reason
    assert after.values == ("funny",)
