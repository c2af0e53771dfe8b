"""Tools for the NeuronTurn loop: the `ToolDyn` contract, `@tool`, the registry and middleware."""

from .context import ProgressReporter, RunContext
from .decorator import tool
from .errors import (
    MCPBridgeError,
    ToolCallError,
    ToolContextError,
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
from .tool import ContextTool, FunctionTool, ToolAnnotations, ToolDyn
from .truncation import truncate_output

__all__ = [
    "ContextTool",
    "FunctionTool",
    "MCPBridgeError",
    "Middleware",
    "ModelRetry",
    "Next",
    "PermissionDecision",
    "PermissionPolicy",
    "ProgressReporter",
    "RunContext",
    "ToolAnnotations",
    "ToolCall",
    "ToolCallError",
    "ToolContextError",
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
