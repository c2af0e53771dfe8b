"""`TurnRecipe`: what an environment builds its `NeuronTurn` from, in whichever process it runs.

A turn object cannot cross a process boundary; its recipe can. The child
process loads the installed plugins (and the `plugins` modules named here)
and builds the same turn with `NeuronTurn.from_plugins`, so a tool or hook
behaves the same in-process, in a child and in the sandbox.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    field_validator,
)

from layer0 import StateReader
from neuron_turn import (
    ApprovalPolicy,
    CodeExecution,
    HostedMCP,
    HostedTool,
    ImageGeneration,
    NeuronTurn,
    NeuronTurnConfig,
    PluginManager,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.hosted_tools import (
    as_hosted_tools,
    hosted_tool_from_json,
    hosted_tool_json,
)
from neuron_turn.loop.sampling import Sampling
from neuron_turn.loop.thinking import Thinking


def _hosted_tool(value: object) -> HostedTool:
    """A hosted tool as given, or read from its JSON.

    Raises:
        ValueError: a remote MCP server granted with a token: the recipe is written
            into the sandbox, where the model's code runs, so no secret may be in it.
    """
    tool = (
        value
        if isinstance(value, WebSearch | WebFetch | CodeExecution | HostedMCP | ImageGeneration)
        else hosted_tool_from_json(value)
    )
    if isinstance(tool, HostedMCP) and tool.authorization is not None:
        raise ValueError(
            f"HostedMCP {tool.label!r} carries an authorization token, which a sandboxed turn "
            "cannot take: its recipe is written into the sandbox, where the model's code runs; "
            "grant a server that needs no token, or run the turn outside the sandbox"
        )
    return tool


HostedToolField = Annotated[
    HostedTool,
    PlainValidator(_hosted_tool),
    PlainSerializer(hosted_tool_json),
    WithJsonSchema({"type": "object", "required": ["name"]}),
]
"""A hosted tool in a recipe: the tool itself, or its JSON (`{"name": "web_search", ...}`)."""

__all__ = ["TurnRecipe"]


class TurnRecipe(BaseModel):
    """The plugin names and settings a `NeuronTurn` is built from; plain JSON, no secrets."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    model: str
    """`"<provider>:<model>"`; the provider itself always runs in the parent."""
    tools: tuple[str, ...] = ()
    """Names of tools plugins registered."""
    system: str = ""
    """The base system prompt."""
    context: str | None = "sliding_window"
    """The context strategy's name (None: never compact)."""
    plugins: tuple[str, ...] = ()
    """Import paths of extra plugin modules to register, beyond the installed entry points."""
    max_turns: int = Field(default=10, ge=1)
    """Most model calls per turn."""
    max_tokens: int | None = 4096
    """Output token cap per model call."""
    effect_tools: bool = True
    """Offer the effect tools (write_memory, delegate, handoff, …)."""
    stop_at_tools: tuple[str, ...] = ()
    """Tools whose successful call ends the turn with its result as the answer
    (`NeuronTurnConfig.stop_at_tools`)."""
    thinking: Thinking | None = None
    """How much the model thinks (`NeuronTurnConfig.thinking`); the parent makes no model
    call for the child with another setting."""
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The sampling temperature (`NeuronTurnConfig.temperature`; None: the API's)."""
    sampling: Sampling | None = None
    """Sampling settings beyond temperature (`NeuronTurnConfig.sampling`); the caller's
    process checks its provider takes them before the child starts."""
    approve_tools: tuple[str, ...] = ()
    """Tool names or patterns (`"write_*"`) whose calls wait for a person's approval:
    the turn pauses in the child and a resume with the decisions runs them there."""
    hosted_tools: tuple[HostedToolField, ...] = ()
    """Tools the provider runs (`neuron_turn.WebSearch`, `WebFetch`, `CodeExecution`,
    `ImageGeneration`, `HostedMCP` without a token), with the caller's limits and
    settings; the parent refuses a model call from the child that asks for any other,
    or for other limits."""

    @field_validator("hosted_tools")
    @classmethod
    def _one_of_each_kind(cls, tools: tuple[HostedTool, ...]) -> tuple[HostedTool, ...]:
        return as_hosted_tools(tools)

    def plugin_manager(self) -> PluginManager:
        """Return a manager with the installed plugins and this recipe's `plugins` modules.

        Raises:
            ImportError: a module of `plugins` does not import.
            neuron_turn.PluginError: one does not register as a plugin.
        """
        manager = PluginManager()
        manager.load_entry_points()
        for path in self.plugins:
            manager.register(importlib.import_module(path), name=path)
        return manager

    def build(
        self,
        *,
        manager: PluginManager,
        state: StateReader | None = None,
        model: str | None = None,
        **provider_options: Any,
    ) -> NeuronTurn:
        """Build the turn from `manager`'s plugins (with `model` instead of the recipe's)."""
        config = NeuronTurnConfig(
            max_turns=self.max_turns,
            max_tokens=self.max_tokens,
            effect_tools=self.effect_tools,
            stop_at_tools=self.stop_at_tools,
            hosted_tools=self.hosted_tools,
            thinking=self.thinking,
            temperature=self.temperature,
            sampling=self.sampling,
            approval=ApprovalPolicy.of(self.approve_tools) if self.approve_tools else None,
        )
        return NeuronTurn.from_plugins(
            model=model or self.model,
            tools=self.tools,
            context=self.context,
            system=self.system,
            state=state,
            config=config,
            provider_options=provider_options or None,
            plugins=manager,
        )
