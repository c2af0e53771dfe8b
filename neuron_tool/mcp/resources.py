"""An MCP server's resources: those it lists, the templates of others, and what one holds.

`MCPClient.read_resource(uri)` gives each of a resource's contents as a layer0
block a turn's message takes (`MCPResourceContents.block`): its text, or its
blob as a file of its media type (an image of the four every model API takes,
else a document). The uri goes to the server as given; nothing is fetched here.
A blob whose base64 does not decode, or that claims an image type when its bytes
are no image, is refused naming its uri (`MCPInvalidAnswerError`); an image is
the type its bytes are, whatever the server says.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import mcp_types as types

from layer0 import Base64Source, CustomBlock, ImageBlock, TextBlock

from ..files import FileBlock, document_of
from ._convert import blob_file, decodes, image_fault
from .errors import MCPInvalidAnswerError, MCPUndeclaredArgumentError

__all__ = ["MCPResource", "MCPResourceContents", "MCPResourceTemplate", "uri_variables"]

_EXPRESSION: Final = re.compile(r"\{([^{}]*)\}")
# RFC 6570's operators (section 2.2), the reserved ones included, which a name follows.
_OPERATORS: Final = "+#./;?&=,!@|"
# A prefix (`:3`) or explode (`*`) modifier after a name (section 2.4).
_MODIFIER: Final = re.compile(r"(?::\d*|\*)$")


@dataclass(frozen=True)
class MCPResource:
    """A resource an MCP server (`server`) lists: its uri, names, and what it says of its content.

    `size` is the server's claim of its bytes, if it made one; reading it is
    bounded by the client's `max_response_bytes` whatever it claims.
    """

    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class MCPResourceTemplate:
    """A template of resources an MCP server (`server`) reads: an RFC 6570 `uri_template`.

    Fill it in yourself and pass the uri to `MCPClient.read_resource`.
    """

    server: str
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the URI template's variables, in order: its arguments to complete.

        RFC 6570's expressions, operators and modifiers taken off:
        `files://{+path}{?q,lang}` has `path`, `q` and `lang`.
        """
        return uri_variables(self.uri_template)

    def check_declared(self, arguments: Mapping[str, object]) -> None:
        """Refuse `arguments` (a completion's) unless each is a variable of the URI template.

        Why: the server is untrusted, and a name its template never had is sent
        to no one, as a prompt's undeclared argument is not.

        Raises:
            MCPUndeclaredArgumentError: Some are not variables (all of them named).
        """
        variables = self.variables
        undeclared = tuple(name for name in arguments if name not in variables)
        if undeclared:
            raise MCPUndeclaredArgumentError(
                self.server, self.uri_template, undeclared, variables, of="resource template"
            )


def uri_variables(template: str) -> tuple[str, ...]:
    """The variable names of an RFC 6570 URI template, each once, in order of appearance.

    `{id}`, `{+path}`, `{#frag}`, `{.ext}`, `{/seg*}`, `{;p}`, `{?q,lang}`, `{&x:3}`:
    the operator before the names and each name's modifier (`*`, `:N`) are not
    part of it. Text outside braces is no variable.
    """
    names: dict[str, None] = {}
    for expression in _EXPRESSION.findall(template):
        for spec in expression.lstrip(_OPERATORS).split(","):
            name = _MODIFIER.sub("", spec.strip())
            if name:
                names[name] = None
    return tuple(names)


@dataclass(frozen=True)
class MCPResourceContents:
    """One of the contents a resource read gave: its uri, media type, and its layer0 block.

    `block` is a `TextBlock` for text, else the blob as a file (`ImageBlock` or
    a document's `CustomBlock`), ready for a turn's message.
    """

    uri: str
    mime_type: str | None
    block: TextBlock | FileBlock

    @property
    def text(self) -> str | None:
        """The text, for text contents; `None` for a blob."""
        return self.block.text if isinstance(self.block, TextBlock) else None

    @property
    def data(self) -> bytes | None:
        """The bytes, for a blob; `None` for text."""
        block = self.block
        if isinstance(block, ImageBlock):
            source = block.source
        elif isinstance(block, CustomBlock) and (document := document_of(block.data)) is not None:
            source = document[0]
        else:
            return None
        return base64.b64decode(source.data) if isinstance(source, Base64Source) else None


def resource_of(resource: types.Resource, *, server: str) -> MCPResource:
    """Our `MCPResource` for the SDK's description of one."""
    return MCPResource(
        server=server,
        uri=resource.uri,
        name=resource.name,
        title=resource.title,
        description=resource.description,
        mime_type=resource.mime_type,
        size=resource.size,
    )


def template_of(template: types.ResourceTemplate, *, server: str) -> MCPResourceTemplate:
    """Our `MCPResourceTemplate` for the SDK's description of one."""
    return MCPResourceTemplate(
        server=server,
        uri_template=template.uri_template,
        name=template.name,
        title=template.title,
        description=template.description,
        mime_type=template.mime_type,
    )


def read_request(uri: str) -> str:
    """How messages name the read of the resource at `uri`."""
    return f"the read of resource {uri!r}"


def resource_contents(
    result: types.ReadResourceResult, *, server: str, uri: str
) -> list[MCPResourceContents]:
    """Our `MCPResourceContents` for each of the contents the server read at `uri`.

    Raises:
        MCPInvalidAnswerError: A blob's base64 does not decode, or it claims an image
            type a model API takes and its bytes are no image of those.
    """
    return [_contents(contents, server=server, uri=uri) for contents in result.contents]


def _contents(
    contents: types.TextResourceContents | types.BlobResourceContents, *, server: str, uri: str
) -> MCPResourceContents:
    if isinstance(contents, types.TextResourceContents):
        block: TextBlock | FileBlock = TextBlock(text=contents.text)
    elif not decodes(contents.blob):
        reason = f"the base64 blob of {contents.uri!r} does not decode"
        raise MCPInvalidAnswerError(server, read_request(uri), reason)
    elif (fault := image_fault(contents.blob, contents.mime_type, repr(contents.uri))) is not None:
        raise MCPInvalidAnswerError(server, read_request(uri), fault)
    else:
        block = blob_file(contents.blob, contents.mime_type, contents.uri)
    return MCPResourceContents(uri=contents.uri, mime_type=contents.mime_type, block=block)
