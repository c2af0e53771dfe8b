"""Hosted tools: tools the model provider runs on its own servers (search, code, remote MCP).

pydantic-ai calls them builtin tools, the OpenAI Agents SDK hosted tools. The
caller grants them (`NeuronTurnConfig.hosted_tools`); each provider plugin
maps the ones its API has to its own tool entries (Anthropic `web_search`,
`web_fetch`, `code_execution`; the OpenAI Responses API `web_search`,
`code_interpreter`, `mcp`, `image_generation`) and says which it has in
`Provider.hosted_tools`, and which `ImageGeneration` settings it takes in
`image_generation_takes` (none said: Gemini's aspect ratio and size). A turn
over a provider that lacks one is refused when the turn is made
(`UnsupportedHostedToolError`), never sent without it: a model told nothing of
a search it was promised would answer from memory as if it had searched.

The model cannot widen them: the domains, the location, the most uses per
model call and a remote MCP server's allowed tools are the caller's, sent as the
API's own limits, and a call's
`TurnConfig.allowed_tools` leaves out a hosted tool it does not name (by its
`name`), as it does a function tool. What a provider runs for them is billed
by the provider; each provider plugin says which fees its cost includes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, TypeAlias

from pydantic import JsonValue

from layer0 import NonRetryableError

__all__ = [
    "GEMINI_IMAGE_OPTIONS",
    "HOSTED_TOOL_NAMES",
    "IMAGE_OPTIONS",
    "CodeExecution",
    "HostedMCP",
    "HostedTool",
    "HostedToolCall",
    "HostedToolName",
    "ImageGeneration",
    "UnsupportedHostedToolError",
    "UserLocation",
    "WebFetch",
    "WebSearch",
    "as_hosted_tools",
    "check_hosted_tools",
    "hosted_tool_from_json",
    "hosted_tool_json",
    "offered_hosted_tools",
]

HostedToolName: TypeAlias = Literal[
    "web_search", "web_fetch", "code_execution", "mcp", "image_generation"
]
"""A hosted tool's name: what `Provider.hosted_tools` lists and `allowed_tools` names."""

HOSTED_TOOL_NAMES: Final[tuple[HostedToolName, ...]] = (
    "web_search",
    "web_fetch",
    "code_execution",
    "mcp",
    "image_generation",
)
"""Every hosted tool's name, in the order the docs list them."""

_MAX_DOMAINS: Final = 100
_MAX_TEXT: Final = 200
_MAX_URL: Final = 2000
_LABEL: Final = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


class UnsupportedHostedToolError(NonRetryableError, ValueError):
    """A turn's hosted tool that its provider's API does not have, or a malformed one."""


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_TEXT:
        raise UnsupportedHostedToolError(
            f"{what} must be a non-empty string of at most {_MAX_TEXT} characters; got {value!r}"
        )
    return value


def _domains(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise UnsupportedHostedToolError(
            f"{what} is a collection of domains, not the string {values!r}"
        )
    domains = tuple(_text(value, what) for value in values)
    if len(domains) > _MAX_DOMAINS:
        raise UnsupportedHostedToolError(
            f"{what} holds {len(domains)} domains; at most {_MAX_DOMAINS}"
        )
    for domain in domains:
        if "://" in domain or any(ch.isspace() for ch in domain):
            raise UnsupportedHostedToolError(
                f"{what}: {domain!r} is not a domain (write 'example.com' or "
                "'example.com/docs', without a scheme or spaces)"
            )
    return domains


def _max_uses(value: int | None, what: str) -> int | None:
    if value is not None and (type(value) is not int or value < 1):
        raise UnsupportedHostedToolError(
            f"{what}.max_uses must be an int of 1 or more; got {value!r}"
        )
    return value


@dataclass(frozen=True, slots=True)
class UserLocation:
    """Where the user roughly is, so a web search can prefer local results.

    `country` is a two-letter ISO 3166-1 code, `timezone` an IANA name
    (`"Europe/Paris"`); every field is optional.
    """

    city: str | None = None
    region: str | None = None
    country: str | None = None
    timezone: str | None = None

    def __post_init__(self) -> None:
        """Refuse fields that are not short strings, and a country that is not two letters.

        Raises:
            UnsupportedHostedToolError: naming the field.
        """
        for name in ("city", "region", "country", "timezone"):
            value = getattr(self, name)
            if value is not None:
                _text(value, f"UserLocation.{name}")
        if self.country is not None and not (len(self.country) == 2 and self.country.isalpha()):
            raise UnsupportedHostedToolError(
                f"UserLocation.country is a two-letter ISO code such as 'US'; got {self.country!r}"
            )

    def as_dict(self) -> dict[str, str]:
        """The fields that are set, by name (what each API's `user_location` holds)."""
        return {
            name: value
            for name in ("city", "region", "country", "timezone")
            if (value := getattr(self, name)) is not None
        }


@dataclass(frozen=True, slots=True)
class WebSearch:
    """The provider's web search: the model searches, reads the results, and cites them.

    `allowed_domains` (only these) or `blocked_domains` (never these), not
    both; `max_uses` caps the searches of one model call where the API can
    (Anthropic's `max_uses`, the Responses API's `max_tool_calls`);
    `user_location` localises results.
    """

    name: ClassVar[HostedToolName] = "web_search"

    max_uses: int | None = None
    allowed_domains: Sequence[str] = ()
    blocked_domains: Sequence[str] = ()
    user_location: UserLocation | None = None

    def __post_init__(self) -> None:
        """Check the limits (see `UnsupportedHostedToolError`); keep the domains as tuples."""
        _check_limits(self, "WebSearch")
        if self.user_location is not None and not isinstance(self.user_location, UserLocation):
            raise UnsupportedHostedToolError(
                "WebSearch.user_location must be a UserLocation; "
                f"got {type(self.user_location).__name__}"
            )


@dataclass(frozen=True, slots=True)
class WebFetch:
    """The provider fetches a web page or PDF whose address the conversation holds.

    Anthropic's `web_fetch` (which fetches only addresses that appeared in the
    conversation), Google's URL context. Limits as `WebSearch`'s.
    """

    name: ClassVar[HostedToolName] = "web_fetch"

    max_uses: int | None = None
    allowed_domains: Sequence[str] = ()
    blocked_domains: Sequence[str] = ()

    def __post_init__(self) -> None:
        """Check the limits (see `UnsupportedHostedToolError`); keep the domains as tuples."""
        _check_limits(self, "WebFetch")


@dataclass(frozen=True, slots=True)
class CodeExecution:
    """The provider runs code the model writes, in its own sandbox.

    Anthropic's `code_execution`, the Responses API's `code_interpreter`: the
    code never runs on the caller's machine.
    """

    name: ClassVar[HostedToolName] = "code_execution"


@dataclass(frozen=True, slots=True)
class HostedMCP:
    """A remote MCP server the provider connects to and calls for the model.

    pydantic-ai's `MCPServerTool`, the OpenAI Agents SDK's `HostedMCPTool`: the
    Responses API's `mcp` tool, Anthropic's MCP connector. The provider lists
    the server's tools and runs the model's calls itself, without asking (the
    caller grants the server here, and `allowed_tools`, when given, the only
    tools the model may call on it). Several servers may be granted, each
    under its own `label` (1-64 of A-Z, a-z, 0-9, `_` and `-`). `url` is the
    server's `https://` address, which the provider reaches, not this process.

    `authorization` is a bearer token the provider sends the server: a secret,
    never in a `repr`, a log line or an error, and never written as JSON, so a
    server needing one is given in the process that calls the provider, not in a
    recipe or on a command line.

    `require_approval` makes the provider stop before running a call and ask
    (the OpenAI Agents SDK's `require_approval` with `on_approval_request`):
    True for every tool of the server, or the names of the tools that need a
    person's "yes". The turn then pauses as on a held call of its own
    (`pending_approvals` lists it as `hosted`; see `hosted_approvals`), and
    the resume sends the decision to the provider, which runs the call or not.
    Only providers that can pause a hosted call take it (the Responses API);
    a turn granting it elsewhere is refused when made.
    """

    name: ClassVar[HostedToolName] = "mcp"

    label: str
    url: str
    allowed_tools: Sequence[str] | None = None
    authorization: str | None = field(default=None, repr=False)
    require_approval: bool | Sequence[str] = False

    def __post_init__(self) -> None:
        """Check the label, the address and the tool names (see `UnsupportedHostedToolError`)."""
        if not isinstance(self.label, str) or _LABEL.match(self.label) is None:
            raise UnsupportedHostedToolError(
                f"HostedMCP.label is 1-64 of A-Z, a-z, 0-9, '_' and '-'; got {self.label!r}"
            )
        url = self.url
        if (
            not isinstance(url, str)
            or not url.startswith("https://")
            or len(url) > _MAX_URL
            or any(ch.isspace() for ch in url)
        ):
            raise UnsupportedHostedToolError(
                f"HostedMCP.url is the server's https:// address (the provider reaches it); "
                f"got {url!r}"
            )
        if self.allowed_tools is not None:
            if isinstance(self.allowed_tools, str):
                raise UnsupportedHostedToolError(
                    "HostedMCP.allowed_tools is a collection of tool names, not the string "
                    f"{self.allowed_tools!r}"
                )
            names = tuple(_text(name, "HostedMCP.allowed_tools") for name in self.allowed_tools)
            object.__setattr__(self, "allowed_tools", names)
        if self.authorization is not None and (
            not isinstance(self.authorization, str) or not self.authorization.strip()
        ):
            # The value itself is a secret: never in the message.
            raise UnsupportedHostedToolError("HostedMCP.authorization is a non-empty string")
        object.__setattr__(self, "require_approval", _approval(self.require_approval))

    @property
    def approval_names(self) -> tuple[str, ...] | None:
        """The tools whose calls wait for approval: None for all of them, () for none."""
        asked = self.require_approval
        if asked is True:
            return None
        return () if asked is False else tuple(asked)


def _approval(value: object) -> bool | tuple[str, ...]:
    """`HostedMCP.require_approval` checked: a bool, or a non-empty collection of tool names."""
    if isinstance(value, bool):
        return value
    # A mapping's keys would pass for names unseen.
    if isinstance(value, str | Mapping) or not isinstance(value, Collection):
        raise UnsupportedHostedToolError(
            "HostedMCP.require_approval is True, False or a collection of tool names; "
            f"got {value!r}"
        )
    names = tuple(_text(name, "HostedMCP.require_approval") for name in value)
    if not names:
        raise UnsupportedHostedToolError(
            "HostedMCP.require_approval names no tool; give False for none, True for all"
        )
    return names


_ASPECT_RATIO: Final = re.compile(r"[1-9][0-9]?:[1-9][0-9]?\Z")
_IMAGE_SIZES: Final = ("1K", "2K", "4K")
_IMAGE_QUALITIES: Final = ("low", "medium", "high", "auto")
_IMAGE_FORMATS: Final = ("png", "jpeg", "webp")
_IMAGE_BACKGROUNDS: Final = ("transparent", "opaque", "auto")
_IMAGE_MODERATIONS: Final = ("auto", "low")
_IMAGE_MODEL: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}\Z")

IMAGE_OPTIONS: Final[tuple[str, ...]] = (
    "aspect_ratio",
    "image_size",
    "quality",
    "output_format",
    "background",
    "output_compression",
    "moderation",
    "model",
)
"""`ImageGeneration`'s settings, in the order the docs list them."""

GEMINI_IMAGE_OPTIONS: Final[Mapping[str, frozenset[str] | None]] = {
    "aspect_ratio": None,
    "image_size": None,
}
"""What a provider takes of `ImageGeneration` when it says nothing (`image_generation_takes`):
the aspect ratio and the size, any valid value (Gemini's `imageConfig`)."""


def _one_of(value: object, allowed: tuple[str, ...], what: str) -> None:
    if value is not None and value not in allowed:
        raise UnsupportedHostedToolError(
            f"ImageGeneration.{what} is one of {', '.join(allowed)}; got {value!r}"
        )


@dataclass(frozen=True, slots=True)
class ImageGeneration:
    """The model makes images: they come back in its answer, beside its text.

    pydantic-ai's `ImageGenerationTool`: on Gemini's image models (`gemini-2.5-flash-image`,
    `gemini-3-pro-image-preview`, ...) the answer may hold images
    (`responseModalities` with `IMAGE`); on the OpenAI Responses API the model
    calls its `image_generation` tool. The images are in the turn's output
    message as image blocks and in the session's history. Each setting is sent
    as the API's own when given, and a provider that has no such setting refuses
    the turn when it is made (`check_hosted_tools`), never drops it:

    - `aspect_ratio` (`"16:9"`): Gemini's `aspectRatio`; OpenAI takes 1:1, 3:2 and
      2:3 (its sizes 1024x1024, 1536x1024 and 1024x1536).
    - `image_size` (`"1K"`, `"2K"`, `"4K"`): Gemini's only.
    - `quality` (`low`, `medium`, `high`, `auto`), `output_format` (`png`, `jpeg`,
      `webp`), `background` (`transparent`, `opaque`, `auto`; transparent needs png
      or webp), `output_compression` (0-100, for jpeg and webp), `moderation`
      (`auto`, `low`) and `model` (the image model, `"gpt-image-1-mini"`): OpenAI's.
    """

    name: ClassVar[HostedToolName] = "image_generation"

    aspect_ratio: str | None = None
    image_size: str | None = None
    quality: str | None = None
    output_format: str | None = None
    background: str | None = None
    output_compression: int | None = None
    moderation: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        """Refuse a setting outside what the APIs take, naming it (`UnsupportedHostedToolError`)."""
        ratio = self.aspect_ratio
        if ratio is not None and (not isinstance(ratio, str) or not _ASPECT_RATIO.match(ratio)):
            raise UnsupportedHostedToolError(
                f"ImageGeneration.aspect_ratio is width:height such as '16:9'; got {ratio!r}"
            )
        _one_of(self.image_size, _IMAGE_SIZES, "image_size")
        _one_of(self.quality, _IMAGE_QUALITIES, "quality")
        _one_of(self.output_format, _IMAGE_FORMATS, "output_format")
        _one_of(self.background, _IMAGE_BACKGROUNDS, "background")
        _one_of(self.moderation, _IMAGE_MODERATIONS, "moderation")
        compression = self.output_compression
        if compression is not None and (
            type(compression) is not int or not 0 <= compression <= 100
        ):
            raise UnsupportedHostedToolError(
                f"ImageGeneration.output_compression is an int from 0 to 100; got {compression!r}"
            )
        if compression is not None and self.output_format not in ("jpeg", "webp"):
            raise UnsupportedHostedToolError(
                "ImageGeneration.output_compression compresses jpeg and webp images; "
                f"set output_format to one of them (got {self.output_format!r})"
            )
        if self.background == "transparent" and self.output_format == "jpeg":
            raise UnsupportedHostedToolError(
                "ImageGeneration.background 'transparent' needs output_format png or webp "
                "(jpeg has no transparency)"
            )
        model = self.model
        if model is not None and (not isinstance(model, str) or not _IMAGE_MODEL.match(model)):
            raise UnsupportedHostedToolError(
                "ImageGeneration.model is an image model's name such as 'gpt-image-1-mini'; "
                f"got {model!r}"
            )

    def settings(self) -> dict[str, str | int]:
        """The settings that are given, by name."""
        return {name: value for name in IMAGE_OPTIONS if (value := getattr(self, name)) is not None}


HostedTool: TypeAlias = WebSearch | WebFetch | CodeExecution | HostedMCP | ImageGeneration
"""A tool the provider runs: `WebSearch`, `WebFetch`, `CodeExecution`, `HostedMCP` or
`ImageGeneration`."""

_KINDS: Final = (WebSearch, WebFetch, CodeExecution, HostedMCP, ImageGeneration)
_BY_NAME: Final[Mapping[str, type[HostedTool]]] = {kind.name: kind for kind in _KINDS}
_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "web_search": frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
    "web_fetch": frozenset({"max_uses", "allowed_domains", "blocked_domains"}),
    "code_execution": frozenset(),
    "mcp": frozenset({"label", "url", "allowed_tools", "require_approval"}),
    "image_generation": frozenset(IMAGE_OPTIONS),
}
_REQUIRED: Final[Mapping[str, frozenset[str]]] = {"mcp": frozenset({"label", "url"})}
_LOCATION_FIELDS: Final = frozenset({"city", "region", "country", "timezone"})


@dataclass(frozen=True, slots=True)
class HostedToolCall:
    """A hosted tool's call the provider ran within one model call: which tool, given what.

    For the record (`ModelCallDone.hosted_calls`, traces), so a caller sees
    what was searched, fetched or run on its behalf; the loop never runs it.
    `name` is the hosted tool's (`"web_search"`, ...), `input` what the API
    says the call was given (a search's query, an address, the code).
    """

    name: str
    input: JsonValue = None


def hosted_tool_json(tool: HostedTool) -> dict[str, JsonValue]:
    """`tool` as JSON: `{"name": "web_search", ...}` with the fields that are set.

    The form a recipe, a channel or a command line carries a hosted tool in;
    `hosted_tool_from_json` reads it back.

    Raises:
        UnsupportedHostedToolError: a `HostedMCP` with an `authorization`, a secret
            no JSON form carries.
    """
    data: dict[str, JsonValue] = {"name": tool.name}
    if isinstance(tool, HostedMCP):
        if tool.authorization is not None:
            raise UnsupportedHostedToolError(
                f"the MCP server {tool.label!r} has an authorization token, a secret that is "
                "never written as JSON (a recipe, a channel, a command line); grant it in the "
                "process that calls the provider"
            )
        data["label"], data["url"] = tool.label, tool.url
        if tool.allowed_tools is not None:
            data["allowed_tools"] = list(tool.allowed_tools)
        if tool.require_approval is not False:
            asked = tool.require_approval
            data["require_approval"] = True if asked is True else list(asked)
        return data
    if isinstance(tool, WebSearch | WebFetch):
        if tool.max_uses is not None:
            data["max_uses"] = tool.max_uses
        if tool.allowed_domains:
            data["allowed_domains"] = list(tool.allowed_domains)
        if tool.blocked_domains:
            data["blocked_domains"] = list(tool.blocked_domains)
    if isinstance(tool, WebSearch) and tool.user_location is not None:
        data["user_location"] = dict(tool.user_location.as_dict())
    if isinstance(tool, ImageGeneration):
        data.update(tool.settings())
    return data


def hosted_tool_from_json(data: object) -> HostedTool:
    """The hosted tool `hosted_tool_json` wrote; checked as its constructor checks it.

    Raises:
        UnsupportedHostedToolError: not an object with a known `name`, a field the
            tool does not have, or a limit it refuses; the message names which.
    """
    if not isinstance(data, Mapping):
        raise UnsupportedHostedToolError(
            f"a hosted tool is an object with a name; got {type(data).__name__}"
        )
    fields: dict[str, Any] = dict(data)
    name = fields.pop("name", None)
    kind = _BY_NAME.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnsupportedHostedToolError(
            f"unknown hosted tool {name!r}; known: {', '.join(HOSTED_TOOL_NAMES)}"
        )
    unknown = sorted(set(fields) - _FIELDS[kind.name])
    if unknown:
        raise UnsupportedHostedToolError(
            f"hosted tool {kind.name} has no field {', '.join(map(repr, unknown))}"
        )
    missing = sorted(_REQUIRED.get(kind.name, frozenset()) - set(fields))
    if missing:
        raise UnsupportedHostedToolError(
            f"hosted tool {kind.name} needs {' and '.join(missing)} "
            '(e.g. {"name": "mcp", "label": "docs", "url": "https://example.com/mcp"})'
        )
    asked = fields.get("require_approval", False)
    if not isinstance(asked, bool | list | tuple):
        raise UnsupportedHostedToolError(
            f"hosted tool {kind.name}: require_approval is true, false or a list of tool "
            f"names; got {asked!r}"
        )
    if "allowed_tools" in fields and not isinstance(fields["allowed_tools"], list | tuple):
        raise UnsupportedHostedToolError(
            f"hosted tool {kind.name}: allowed_tools is a list of tool names; "
            f"got {fields['allowed_tools']!r}"
        )
    for key in ("allowed_domains", "blocked_domains"):
        if key in fields and not isinstance(fields[key], list | tuple):
            raise UnsupportedHostedToolError(
                f"hosted tool {kind.name}: {key} is a list of domains; got {fields[key]!r}"
            )
    location = fields.get("user_location")
    if location is not None:
        fields["user_location"] = _location(location)
    return kind(**fields)


def _location(value: object) -> UserLocation:
    if not isinstance(value, Mapping) or not set(value) <= _LOCATION_FIELDS:
        raise UnsupportedHostedToolError(
            f"user_location is an object of {', '.join(sorted(_LOCATION_FIELDS))}; got {value!r}"
        )
    return UserLocation(**value)


def _check_limits(tool: WebSearch | WebFetch, what: str) -> None:
    _max_uses(tool.max_uses, what)
    allowed = _domains(tool.allowed_domains, f"{what}.allowed_domains")
    blocked = _domains(tool.blocked_domains, f"{what}.blocked_domains")
    if allowed and blocked:
        raise UnsupportedHostedToolError(
            f"{what} takes allowed_domains or blocked_domains, not both (the APIs refuse both)"
        )
    object.__setattr__(tool, "allowed_domains", allowed)
    object.__setattr__(tool, "blocked_domains", blocked)


def as_hosted_tools(tools: Sequence[HostedTool]) -> tuple[HostedTool, ...]:
    """Return `tools` as a tuple once each is a hosted tool and no two are of one kind.

    Several `HostedMCP` servers may be given, each under its own label.

    Raises:
        UnsupportedHostedToolError: naming the value that is not a hosted tool, the
            kind given twice, or an MCP server's label given twice.
    """
    if isinstance(tools, _KINDS):
        raise UnsupportedHostedToolError(
            "hosted_tools is a list of hosted tools; put the single tool in a list"
        )
    checked = tuple(tools)
    seen: set[str] = set()
    for tool in checked:
        if not isinstance(tool, _KINDS):
            raise UnsupportedHostedToolError(
                "hosted_tools holds WebSearch, WebFetch, CodeExecution, HostedMCP and "
                "ImageGeneration values; "
                f"got {type(tool).__name__}"
            )
        # Several MCP servers, one of each other kind.
        key = f"mcp server {tool.label!r}" if isinstance(tool, HostedMCP) else tool.name
        if key in seen:
            raise UnsupportedHostedToolError(f"hosted_tools has two {key} tools; give one")
        seen.add(key)
    return checked


def check_hosted_tools(
    tools: Sequence[HostedTool], *, provider: object, function_tools: Collection[str]
) -> None:
    """Refuse hosted `tools` that `provider` does not run or a function tool's name shadows.

    Raises:
        UnsupportedHostedToolError: naming the tool, and what the provider runs.
    """
    names: set[str] = {tool.name for tool in tools}
    clash = sorted(names & set(function_tools))
    if clash:
        raise UnsupportedHostedToolError(
            f"a function tool is named {', '.join(clash)}, as a hosted tool of this turn is; "
            "rename the function tool"
        )
    _check_provider(names, provider)
    for tool in tools:
        if isinstance(tool, ImageGeneration):
            _check_image_settings(tool, provider)
    asking = [tool.label for tool in tools if isinstance(tool, HostedMCP) and tool.require_approval]
    if asking and not getattr(provider, "approves_hosted_calls", False):
        raise UnsupportedHostedToolError(
            f"the provider {type(provider).__name__} runs a remote MCP server's calls without "
            f"asking: HostedMCP {', '.join(map(repr, asking))} with require_approval needs one "
            "that pauses a call for approval (the OpenAI Responses API)"
        )


def _check_provider(names: set[str], provider: object) -> None:
    if not names:
        return
    served: Collection[str] = getattr(provider, "hosted_tools", frozenset())
    missing = sorted(names - set(served))
    if missing:
        has = ", ".join(sorted(served)) or "none"
        raise UnsupportedHostedToolError(
            f"the provider {type(provider).__name__} does not run the hosted tool(s) "
            f"{', '.join(missing)} (it runs: {has})"
        )


def _check_image_settings(tool: ImageGeneration, provider: object) -> None:
    """Refuse an `ImageGeneration` setting, or a value of one, that `provider` does not take.

    A provider says what it takes in `image_generation_takes` (setting: the values it
    takes, None for any the tool takes); one that says nothing takes Gemini's
    (`GEMINI_IMAGE_OPTIONS`). Why refuse: a setting dropped unsaid would make an image
    other than the one asked for, and bill for it.
    """
    takes: Mapping[str, frozenset[str] | None] = getattr(
        provider, "image_generation_takes", GEMINI_IMAGE_OPTIONS
    )
    who = type(provider).__name__
    for option, value in tool.settings().items():
        if option not in takes:
            has = ", ".join(name for name in IMAGE_OPTIONS if name in takes) or "none"
            raise UnsupportedHostedToolError(
                f"the provider {who} has no ImageGeneration.{option} setting (it takes: {has})"
            )
        allowed = takes[option]
        if allowed is not None and value not in allowed:
            raise UnsupportedHostedToolError(
                f"the provider {who} takes ImageGeneration.{option} "
                f"{', '.join(sorted(allowed))}; got {value!r}"
            )


def offered_hosted_tools(
    tools: Sequence[HostedTool], allowed: frozenset[str] | None
) -> tuple[HostedTool, ...]:
    """The hosted tools a call offers: all of `tools`, or those `allowed` names when it is set."""
    return tuple(tool for tool in tools if allowed is None or tool.name in allowed)
