"""`MCPTool`: one tool of an MCP server as a `ToolDyn`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import mcp_types as types
from pydantic import JsonValue

from ..context import RunContext
from ..errors import ToolInputError
from ..files import ToolReturn
from ._convert import from_mcp_annotations, local_name
from .sampling import charging_to


class _ToolServer(Protocol):
    """What a tool needs of the `MCPClient` that listed it (a Protocol, so no import circle)."""

    @property
    def name(self) -> str:
        """The server's name, for errors."""
        ...

    @property
    def prefix(self) -> str:
        """What goes before the server's tool names."""
        ...

    @property
    def sampling(self) -> object | None:
        """The client's sampling handler (None: its servers cannot sample)."""
        ...

    @property
    def strict_tools(self) -> bool | None:
        """Whether the server's tools are strict (None: not asked)."""
        ...

    @property
    def sequential_tools(self) -> bool:
        """Whether the server's tools run alone."""
        ...

    async def call_tool(
        self, name: str, arguments: Mapping[str, JsonValue], *, retry_if_lost: bool = False
    ) -> JsonValue | ToolReturn:
        """Call the server's tool `name`."""
        ...


class MCPTool:
    """A tool of an MCP server as a `ToolDyn`; its calls go through the `MCPClient` that made it.

    Its name is the client's prefix plus the server's name for it (characters
    the registry refuses become `_`); `remote_name` is what the server calls it.
    """

    __slots__ = (
        "_client",
        "_retry_safe",
        "annotations",
        "description",
        "input_schema",
        "name",
        "output_schema",
        "remote_name",
        "sequential",
        "strict",
        "takes_context",
    )

    def __init__(self, client: _ToolServer, tool: types.Tool) -> None:
        """Describe the server's `tool`, to be called through `client`."""
        self._client: Final = client
        self.remote_name: Final = tool.name
        self.name: Final = local_name(tool.name, prefix=client.prefix)
        self.description: Final[str] = _description(tool)
        self.input_schema: Final[dict[str, JsonValue]] = tool.input_schema
        self.output_schema: Final[dict[str, JsonValue] | None] = tool.output_schema
        self.annotations: Final = from_mcp_annotations(tool.annotations)
        hints = self.annotations
        # Sending a call again after the server died during it is only safe if
        # running it twice does no harm.
        self._retry_safe: Final = hints is not None and bool(
            hints.read_only_hint or hints.idempotent_hint
        )
        # With a sampling handler, the call's context says whose turn a sample is charged to.
        self.takes_context: Final = client.sampling is not None
        self.strict: Final = client.strict_tools
        """Whether the model's input is constrained to the schema (the client's `strict_tools`)."""
        self.sequential: Final = client.sequential_tools
        """Whether it runs alone (the client's `sequential_tools`)."""

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, server={self.server!r})"

    @property
    def server(self) -> str:
        """The name of the MCP server offering the tool."""
        return self._client.name

    async def call(self, input: JsonValue) -> JsonValue | ToolReturn:
        """Call the tool on its server; see `MCPClient.call_tool` for the result and errors.

        Raises:
            ToolInputError: `input` is not an object of arguments.
        """
        if not isinstance(input, dict):
            message = f"expected an object of arguments, got {type(input).__name__}"
            raise ToolInputError(self.name, "$", message)
        return await self._client.call_tool(self.remote_name, input, retry_if_lost=self._retry_safe)

    async def call_in_context(
        self, input: JsonValue, context: RunContext[Any]
    ) -> JsonValue | ToolReturn:
        """`call`, charging the server's sampling requests during it to `context`'s turn."""
        with charging_to(context):
            return await self.call(input)


def _description(tool: types.Tool) -> str:
    if tool.description:
        return tool.description
    title = tool.title or (tool.annotations.title if tool.annotations else None)
    return title or ""
