"""An MCP server's prompts: those it offers (`MCPPrompt`), and one filled in (`MCPPromptMessages`).

A prompt is a template the server fills in with string arguments into messages
for a model. `MCPClient.get_prompt` gives them as layer0 content a turn takes:
`text()` for a system prompt or instructions (`NeuronTurnConfig(system=...)`),
`content()` for a turn's input message (`TurnInput(message=...)`). Each block
is converted as a tool result's is (`_convert.message_block`): images, audio and
embedded documents are files, the rest text.

The server is untrusted. Arguments a prompt does not declare, and required ones
left out, are refused before any request (`MCPPrompt.check`); an answer whose
base64 does not decode is refused naming the message (`MCPInvalidAnswerError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import mcp_types as types

from layer0 import Content

from ._convert import content_text, data_fault, message_block
from .errors import (
    MCPInvalidAnswerError,
    MCPMissingArgumentError,
    MCPUndeclaredArgumentError,
    MCPUnknownPromptError,
)

__all__ = ["MCPPrompt", "MCPPromptArgument", "MCPPromptMessage", "MCPPromptMessages"]


@dataclass(frozen=True)
class MCPPromptArgument:
    """One argument a prompt declares: its name, what it is for, and whether it must be given."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class MCPPrompt:
    """A prompt an MCP server (`server`) offers, as `MCPClient.list_prompts` lists it."""

    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[MCPPromptArgument, ...] = ()

    def check(self, arguments: Mapping[str, object]) -> None:
        """Refuse `arguments` unless each is declared, a string, and every required one is there.

        Raises:
            MCPUndeclaredArgumentError: Some are not declared (all of them named).
            MCPMissingArgumentError: Some required ones are missing (all of them named).
            TypeError: A value is not a string (MCP's arguments are strings).
        """
        self._check_names(arguments)
        required = (argument.name for argument in self.arguments if argument.required)
        missing = tuple(name for name in required if name not in arguments)
        if missing:
            raise MCPMissingArgumentError(self.server, self.name, missing)
        _check_strings(arguments)

    def check_declared(self, arguments: Mapping[str, object]) -> None:
        """Refuse `arguments` unless each is declared and a string; some may be left out.

        What a completion's arguments are checked against: the argument it
        completes and those already filled in, not every required one.

        Raises:
            MCPUndeclaredArgumentError: Some are not declared (all of them named).
            TypeError: A value is not a string (MCP's arguments are strings).
        """
        self._check_names(arguments)
        _check_strings(arguments)

    def _check_names(self, arguments: Mapping[str, object]) -> None:
        declared = tuple(argument.name for argument in self.arguments)
        undeclared = tuple(name for name in arguments if name not in declared)
        if undeclared:
            raise MCPUndeclaredArgumentError(self.server, self.name, undeclared, declared)


@dataclass(frozen=True)
class MCPPromptMessage:
    """One message of a filled-in prompt: its role, its content, and that content as text.

    `text` describes what is not text (`[image: image/png, 1234 bytes]`), for a
    reader that takes text only.
    """

    role: Literal["user", "assistant"]
    content: Content
    text: str


@dataclass(frozen=True)
class MCPPromptMessages:
    """A prompt (`prompt`) of an MCP server (`server`) filled in: its messages, in order."""

    server: str
    prompt: str
    description: str | None
    messages: tuple[MCPPromptMessage, ...]

    def text(self) -> str:
        """Every message's text, a blank line between: a system prompt or instructions."""
        return "\n\n".join(message.text for message in self.messages)

    def content(self) -> Content:
        """Every message's blocks in order, as one user message: a turn's `TurnInput.message`.

        Raises:
            ValueError: A message is the assistant's, which a user message cannot
                hold as such (`messages` has each with its role, `text()` all as text).
        """
        for index, message in enumerate(self.messages, 1):
            if message.role != "user":
                raise ValueError(
                    f"message {index} of prompt {self.prompt!r} (MCP server {self.server!r})"
                    " is the assistant's; a turn's input is the user's: read .messages,"
                    " or use .text()"
                )
        return Content([block for message in self.messages for block in message.content.blocks])


def prompt_of(prompt: types.Prompt, *, server: str) -> MCPPrompt:
    """Our `MCPPrompt` for the SDK's description of one."""
    arguments = tuple(
        MCPPromptArgument(
            name=argument.name,
            description=argument.description,
            required=bool(argument.required),
        )
        for argument in prompt.arguments or ()
    )
    return MCPPrompt(
        server=server,
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=arguments,
    )


def _check_strings(arguments: Mapping[str, object]) -> None:
    for name, value in arguments.items():
        if not isinstance(value, str):
            kind = type(value).__name__
            raise TypeError(f"prompt arguments are strings; {name!r} is a {kind}")


def find_prompt(prompts: Iterable[MCPPrompt], name: str, *, server: str) -> MCPPrompt:
    """The prompt called `name` among those a server listed.

    Raises:
        MCPUnknownPromptError: It lists none of that name.
    """
    listed = tuple(prompts)
    for prompt in listed:
        if prompt.name == name:
            return prompt
    raise MCPUnknownPromptError(server, name, tuple(prompt.name for prompt in listed))


def prompt_request(name: str) -> str:
    """How messages name the request for prompt `name`."""
    return f"the request for prompt {name!r}"


def prompt_messages(
    result: types.GetPromptResult, *, server: str, prompt: str
) -> MCPPromptMessages:
    """Our `MCPPromptMessages` for the server's answer to a request for `prompt`.

    Raises:
        MCPInvalidAnswerError: A message's base64 data does not decode, or its
            image's bytes are no image of a type a model API takes.
    """
    messages = []
    for index, message in enumerate(result.messages, 1):
        fault = data_fault(message.content)
        if fault is not None:
            reason = f"message {index}: {fault}"
            raise MCPInvalidAnswerError(server, prompt_request(prompt), reason)
        block = message_block(message.content)
        text = content_text([message.content])
        messages.append(MCPPromptMessage(role=message.role, content=Content([block]), text=text))
    return MCPPromptMessages(
        server=server, prompt=prompt, description=result.description, messages=tuple(messages)
    )
