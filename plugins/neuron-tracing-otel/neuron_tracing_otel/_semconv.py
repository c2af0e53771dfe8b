"""The names and values of the OpenTelemetry GenAI semantic conventions we emit.

Written out here rather than imported from `opentelemetry-semantic-conventions`,
whose GenAI names are still "incubating" and move between releases; these
follow the GenAI conventions as of semantic-conventions 1.41 (span names
`invoke_agent {agent}`, `chat {model}`, `execute_tool {tool}`; the client
metrics `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`).
"""

from __future__ import annotations

from typing import Final

OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
SYSTEM: Final = "gen_ai.system"
"""The provider under its pre-1.37 name, still read by many backends."""
AGENT_NAME: Final = "gen_ai.agent.name"
CONVERSATION: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
OUTPUT_TYPE: Final = "gen_ai.output.type"
RESPONSE_MODEL: Final = "gen_ai.response.model"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
ERROR_TYPE: Final = "error.type"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
TOKEN_TYPE: Final = "gen_ai.token.type"

# Opt-in: content (see `capture_content`).
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"

# Ours: what the conventions have no name for.
COST_USD: Final = "neuron.cost.usd"
EXIT_REASON: Final = "neuron.turn.exit_reason"
TURNS_USED: Final = "neuron.turn.model_calls"
TOOL_RESULT_FILES: Final = "neuron.tool.call.result.files"
"""Opt-in, as content: the files a tool returned, named (`describe_file`), never their data."""

INVOKE_AGENT: Final = "invoke_agent"
CHAT: Final = "chat"
EXECUTE_TOOL: Final = "execute_tool"

FINISH_REASON: Final = {
    "end_turn": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "content_filter": "content_filter",
}
"""Our stop reasons as the conventions' finish reasons."""

# Client metrics: names, units and the bucket boundaries the conventions advise.
TOKEN_USAGE: Final = "gen_ai.client.token.usage"
TOKEN_UNIT: Final = "{token}"
TOKEN_BUCKETS: Final = (
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
)
OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
DURATION_UNIT: Final = "s"
DURATION_BUCKETS: Final = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
INPUT: Final = "input"
OUTPUT: Final = "output"
HOSTED_TOOL_CALL: Final = "neuron.hosted_tool_call"
"""The chat span's event for each hosted tool call the provider ran within it (a web
search, code): the GenAI conventions have no name for a call made inside a model call."""
