"""`agent_card`: the A2A agent card of a served agent, declaring its bearer token scheme."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

__all__ = ["BEARER_SCHEME", "INPUT_MODES", "OUTPUT_MODES", "agent_card"]

BEARER_SCHEME: Final = "bearer"
"""The name of the card's security scheme: HTTP `Authorization: Bearer <token>`."""
INPUT_MODES: Final = (
    "text/plain",
    "application/json",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
)
"""The media types a served agent takes: text, data (JSON), images and PDF documents."""
OUTPUT_MODES: Final = ("text/plain", "application/json")
"""The media types of its answers: text, and a typed answer's value as data."""


def agent_card(
    *,
    name: str,
    description: str,
    url: str,
    skills: Sequence[AgentSkill] = (),
    version: str = "1.0.0",
    streaming: bool = True,
) -> AgentCard:
    """The card of an agent served at `url` (its JSON-RPC endpoint) that asks for a bearer token.

    Why: A2A clients read the card to learn where and how to call, so it must
    declare the token scheme (the `bearer` HTTP scheme, required on every call),
    or a client would call without it and only learn from a 401.

    Args:
        name: the agent's name, as other agents see it.
        description: what it does, for the agents (and people) choosing it.
        url: the URL of the JSON-RPC endpoint clients call.
        skills: what it can do (`a2a.types.AgentSkill`: id, name, description, tags);
            none given, one skill of the agent's name and description (A2A asks for one).
        version: the agent's own version.
        streaming: whether it offers `SendStreamingMessage`.
    """
    scheme = SecurityScheme(
        http_auth_security_scheme=HTTPAuthSecurityScheme(
            scheme="bearer",
            description="Send 'Authorization: Bearer <token>' with every request but the card.",
        )
    )
    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=False),
        security_schemes={BEARER_SCHEME: scheme},
        security_requirements=[SecurityRequirement(schemes={BEARER_SCHEME: StringList()})],
        default_input_modes=list(INPUT_MODES),
        default_output_modes=list(OUTPUT_MODES),
        skills=list(skills) or [_whole_agent(name, description)],
    )


def _whole_agent(name: str, description: str) -> AgentSkill:
    return AgentSkill(id="answer", name=name, description=description, tags=["general"])
