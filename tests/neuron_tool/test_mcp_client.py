"""`MCPClient` and `MCPTool` against the toolbox test server, over stdio."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from neuron_tool import (
    ToolAnnotations,
    ToolError,
    ToolInputError,
    ToolRegistry,
    ToolReturn,
    document_block,
    image_block,
    strict_form,
)
from neuron_tool.mcp import MCPClient, MCPTimeoutError, MCPTool, MCPToolError

from .mcp_servers.paths import script_client
from .mcp_servers.toolbox import AUDIO, IMAGE

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 0.5


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def toolbox() -> AsyncIterator[MCPClient]:
    async with script_client("toolbox", name="toolbox", prefix="tb_", timeout=TIMEOUT) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tools(toolbox: MCPClient) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in await toolbox.list_tools()}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def registry(tools: dict[str, MCPTool]) -> ToolRegistry:
    return ToolRegistry(tools.values())


async def test_listing_follows_the_cursors_across_every_page(tools: dict[str, MCPTool]) -> None:
    # The toolbox serves three tools a page, so nine tools take three pages.
    assert list(tools) == [
        "tb_echo",
        "tb_weather",
        "tb_media",
        "tb_fail",
        "tb_sleep_forever",
        "tb_pid",
        "tb_crash",
        "tb_dotted_name",
        "tb_environment",
    ]


async def test_tools_carry_description_schemas_and_annotations(tools: dict[str, MCPTool]) -> None:
    echo = tools["tb_echo"]
    assert echo.remote_name == "echo"
    assert echo.server == "toolbox"
    assert echo.description == "Echo the text."
    assert echo.input_schema["required"] == ["text"]
    assert echo.output_schema is None
    assert echo.annotations == ToolAnnotations(
        title="Echo", read_only_hint=True, idempotent_hint=True
    )
    assert tools["tb_weather"].output_schema is not None
    assert tools["tb_weather"].annotations is None


async def test_a_name_the_registry_refuses_is_rewritten_and_still_reaches_the_tool(
    tools: dict[str, MCPTool], registry: ToolRegistry
) -> None:
    dotted = tools["tb_dotted_name"]
    assert dotted.remote_name == "dotted.name"
    assert dotted.description == "Dotted"  # no description: the title stands in
    assert await registry.call("tb_dotted_name", {}) == "called dotted.name"


async def test_the_registry_calls_the_tools_with_validation(registry: ToolRegistry) -> None:
    assert await registry.call("tb_echo", {"text": "hello"}) == "hello"
    with pytest.raises(ToolInputError):
        await registry.call("tb_echo", {})


async def test_structured_content_is_the_json_result(registry: ToolRegistry) -> None:
    assert await registry.call("tb_weather", {"city": "Oslo"}) == {"city": "Oslo", "celsius": 21.5}


async def test_images_audio_and_resources_are_described_and_the_image_and_audio_are_files(
    registry: ToolRegistry,
) -> None:
    assert await registry.call("tb_media", {}) == ToolReturn(
        "\n".join(
            [
                "Here is everything:",
                "[image: image/png, 1234 bytes]",
                "[audio: audio/wav, 100 bytes]",
                "[resource: file:///srv/report.pdf (application/pdf)]",
                "[resource: memo://note (text/plain)]",
                "remember",
                "[resource: memo://blob, 10 bytes]",
            ]
        ),
        files=[image_block(IMAGE), document_block(AUDIO, media_type="audio/wav")],
    )


async def test_an_error_result_is_a_tool_error_the_model_sees(registry: ToolRegistry) -> None:
    with pytest.raises(MCPToolError, match="the disk is full") as caught:
        await registry.call("tb_fail", {})
    assert isinstance(caught.value, ToolError)
    assert caught.value.tool == "fail"


async def test_a_hanging_tool_times_out_on_time_and_the_session_survives(
    registry: ToolRegistry,
) -> None:
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError) as caught:
        await registry.call("tb_sleep_forever", {})
    assert time.monotonic() - started < TIMEOUT + 2
    assert isinstance(caught.value, TimeoutError)
    assert "'toolbox'" in str(caught.value)
    assert "sleep_forever" in str(caught.value)
    assert await registry.call("tb_echo", {"text": "still here"}) == "still here"


async def test_a_tool_is_called_with_an_object_of_arguments(tools: dict[str, MCPTool]) -> None:
    with pytest.raises(ToolInputError, match="expected an object"):
        await tools["tb_echo"].call(["hello"])


async def test_call_tool_takes_the_server_name_of_the_tool(toolbox: MCPClient) -> None:
    assert await toolbox.call_tool("echo", {"text": "direct"}) == "direct"


async def test_env_and_cwd_reach_the_server(tmp_path_factory: pytest.TempPathFactory) -> None:
    cwd = tmp_path_factory.mktemp("cwd")
    async with script_client("toolbox", env={"TOOLBOX_SECRET": "s3cret"}, cwd=cwd) as client:
        assert await client.call_tool("environment", {}) == f"{cwd}|s3cret"
        assert "s3cret" not in repr(client)


async def test_timeouts_must_be_positive_numbers() -> None:
    with pytest.raises(ValueError, match="positive"):
        MCPClient.stdio("true", timeout=0)
    with pytest.raises(ValueError, match="positive"):
        MCPClient.http("http://127.0.0.1:1/mcp", connect_timeout=float("inf"))


async def test_a_client_with_strict_or_sequential_tools_makes_every_tool_of_its_server_so(
    tools: dict[str, MCPTool],
) -> None:
    async with script_client("toolbox", name="toolbox", strict_tools=True) as strict:
        schemas = ToolRegistry(await strict.list_tools()).schemas()
    async with script_client("toolbox", name="toolbox", sequential_tools=True) as alone:
        sequential = ToolRegistry(await alone.list_tools()).sequential_names

    assert len(schemas) == len(tools) and all(schema.strict is True for schema in schemas)
    assert {schema.strict for schema in ToolRegistry(tools.values()).schemas()} == {None}
    weather = next(schema for schema in schemas if schema.name == "weather")
    # The server leaves `city` optional: strict mode sends it nullable, and a null is not sent on.
    assert strict_form(weather.input_schema, tool="weather").restore({"city": None}) == {}
    # With sequential_tools, every tool of the server runs alone; without, none does.
    assert sequential == {schema.name for schema in schemas} and len(sequential) == len(tools)
    assert ToolRegistry(tools.values()).sequential_names == frozenset()
