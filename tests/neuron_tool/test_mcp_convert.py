from __future__ import annotations

import base64

import mcp_types as types
import pytest
from pydantic import JsonValue

from neuron_tool import ToolAnnotations, ToolError, tool
from neuron_tool.mcp import HttpEndpoint, MCPToolError, StdioCommand
from neuron_tool.mcp._convert import (
    advertised_output_schema,
    content_text,
    error_result,
    from_mcp_annotations,
    local_name,
    result_json,
    success_result,
    to_mcp_annotations,
    to_mcp_tool,
)


def _result(*content: types.ContentBlock, **fields: object) -> types.CallToolResult:
    return types.CallToolResult.model_validate({"content": list(content), **fields})


def test_text_blocks_are_joined_by_newlines() -> None:
    result = _result(types.TextContent(text="one"), types.TextContent(text="two"))
    assert result_json(result, server="s", tool="t") == "one\ntwo"


def test_structured_content_is_the_result_when_present() -> None:
    result = _result(types.TextContent(text='{"a": 1}'), structured_content={"a": 1})
    assert result_json(result, server="s", tool="t") == {"a": 1}


def test_images_audio_and_resources_are_described_not_dropped() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(1226)).decode()
    blocks: list[types.ContentBlock] = [
        types.ImageContent(data=png, mime_type="image/png"),
        types.AudioContent(data="AAAA", mime_type="audio/wav"),
        types.ResourceLink(name="r", uri="file:///a.pdf", mime_type="application/pdf"),
        types.ResourceLink(name="r", uri="https://example.invalid/x"),
        types.EmbeddedResource(
            resource=types.TextResourceContents(uri="memo://n", mime_type="text/plain", text="hi")
        ),
        types.EmbeddedResource(resource=types.BlobResourceContents(uri="memo://b", blob="AAAA")),
    ]
    assert content_text(blocks).splitlines() == [
        "[image: image/png, 1234 bytes]",
        "[audio: audio/wav, 3 bytes]",
        "[resource: file:///a.pdf (application/pdf)]",
        "[resource: https://example.invalid/x]",
        "[resource: memo://n (text/plain)]",
        "hi",
        "[resource: memo://b, 3 bytes]",
    ]


def test_undecodable_image_data_is_described_as_not_decoding() -> None:
    blocks = [types.ImageContent(data="not base64!", mime_type="image/gif")]
    assert content_text(blocks) == "[image: image/gif, its base64 data did not decode]"


def test_error_result_raises_a_tool_error_with_the_tool_text() -> None:
    result = _result(types.TextContent(text="disk full"), is_error=True)
    with pytest.raises(MCPToolError) as caught:
        result_json(result, server="files", tool="write")
    assert isinstance(caught.value, ToolError)
    assert (caught.value.server, caught.value.tool, caught.value.message) == (
        "files",
        "write",
        "disk full",
    )
    assert "disk full" in str(caught.value)


def test_annotations_map_both_ways() -> None:
    ours = ToolAnnotations(
        title="T", read_only_hint=True, destructive_hint=False, idempotent_hint=True
    )
    wire = to_mcp_annotations(ours)
    assert wire == types.ToolAnnotations(
        title="T", read_only_hint=True, destructive_hint=False, idempotent_hint=True
    )
    assert from_mcp_annotations(wire) == ours
    assert from_mcp_annotations(None) is None
    assert to_mcp_annotations(None) is None


def test_local_names_get_the_prefix_and_lose_characters_the_registry_refuses() -> None:
    assert local_name("get-sum", prefix="") == "get-sum"
    assert local_name("files/read.text", prefix="fs_") == "fs_files_read_text"


@tool
def _count(n: int) -> int:
    """Count."""
    return n


@tool
def _record(name: str) -> dict[str, str]:
    """Record."""
    return {"name": name}


def test_non_object_output_schemas_are_only_advertised_to_modern_sessions() -> None:
    assert advertised_output_schema(_count, modern=True) == {"type": "integer"}
    assert advertised_output_schema(_count, modern=False) is None
    assert advertised_output_schema(_record, modern=False) is not None
    assert to_mcp_tool(_count, modern=False).output_schema is None


@pytest.mark.parametrize(
    ("value", "advertised", "modern", "structured"),
    [
        ({"a": 1}, False, False, {"a": 1}),
        ([1, 2], False, False, None),
        ([1, 2], False, True, [1, 2]),
        ("text", False, True, None),
        ("text", True, True, "text"),
        (3, True, True, 3),
    ],
)
def test_success_results_carry_structured_content_when_the_era_allows(
    value: JsonValue, advertised: bool, modern: bool, structured: JsonValue
) -> None:
    result = success_result(value, schema_advertised=advertised, modern=modern)
    assert result.structured_content == structured
    assert not result.is_error
    expected_text = value if isinstance(value, str) else None
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert expected_text is None or text.text == expected_text


def test_error_results_are_flagged() -> None:
    result = error_result("nope")
    assert result.is_error
    assert result.content == [types.TextContent(text="nope")]


def test_endpoints_describe_themselves_without_secrets() -> None:
    command = StdioCommand("python3", ("-m", "mcp_server_time"), env={"TOKEN": "s3cret"})
    assert command.default_name == "mcp_server_time"
    assert command.describe() == "python3 -m mcp_server_time"
    assert "s3cret" not in repr(command)
    assert StdioCommand("npx", ("-y", "@scope/server-x")).default_name == "server-x"
    assert StdioCommand("/usr/bin/mcp-git").default_name == "mcp-git"
    endpoint = HttpEndpoint("http://127.0.0.1:1/mcp", {"Authorization": "Bearer s3cret"})
    assert repr(endpoint) == "HttpEndpoint('http://127.0.0.1:1/mcp')"
    assert endpoint.default_name == endpoint.describe() == "http://127.0.0.1:1/mcp"
    keyed = HttpEndpoint("https://user:s3cret@mcp.example.invalid/v1/mcp?key=s3cret#x")
    assert keyed.describe() == "https://mcp.example.invalid/v1/mcp"
    assert "s3cret" not in repr(keyed)
    assert HttpEndpoint("http://[::1]:8000/mcp").describe() == "http://[::1]:8000/mcp"
