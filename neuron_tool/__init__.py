"""Tools for the NeuronTurn loop: the `ToolDyn` contract, `@tool`, the registry and middleware."""

from .decorator import tool
from .errors import (
    MCPBridgeError,
    ToolCallError,
    ToolError,
    ToolInputError,
    ToolIsolationError,
    ToolNotFoundError,
    ToolPermissionError,
    ToolRegistrationError,
    ToolTimeoutError,
)
from .isolation import isolation, mark_isolated, requires_isolation
from .middleware import Middleware, Next, ToolCall
from .permission import PermissionDecision, PermissionPolicy, permission
from .registry import ToolRegistry
from .retry import ModelRetry
from .schema import ToolSchema
from .timeout import timeout
from .tool import FunctionTool, ToolAnnotations, ToolDyn
from .truncation import truncate_output

__all__ = [
    "FunctionTool",
    "MCPBridgeError",
    "Middleware",
    "ModelRetry",
    "Next",
    "PermissionDecision",
    "PermissionPolicy",
    "ToolAnnotations",
    "ToolCall",
    "ToolCallError",
    "ToolDyn",
    "ToolError",
    "ToolInputError",
    "ToolIsolationError",
    "ToolNotFoundError",
    "ToolPermissionError",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolSchema",
    "ToolTimeoutError",
    "isolation",
    "mark_isolated",
    "permission",
    "requires_isolation",
    "timeout",
    "tool",
    "truncate_output",
]
