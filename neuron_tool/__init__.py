"""Tools for the NeuronTurn loop: the `ToolDyn` contract, `@tool`, the registry and middleware."""

from __future__ import annotations

from typing import TYPE_CHECKING

from layer0._exports import lazy_exports as _lazy_exports

# Functions named like their modules are bound at import: importing the
# submodule later would otherwise set the package attribute to the module.
from .decorator import tool
from .isolation import isolation
from .permission import permission
from .timeout import timeout

if TYPE_CHECKING:
    from .context import Charger, ProgressReporter, RunContext
    from .errors import (
        ExternalToolCallError,
        MCPBridgeError,
        StrictSchemaError,
        ToolCallError,
        ToolContextError,
        ToolError,
        ToolFileError,
        ToolInputError,
        ToolIsolationError,
        ToolNotFoundError,
        ToolPermissionError,
        ToolPrepareError,
        ToolRegistrationError,
        ToolSourceError,
        ToolStepSourceError,
        ToolTimeoutError,
        ToolViewError,
    )
    from .external import ExternalTool, is_external
    from .files import (
        DOCUMENT_TYPE,
        IMAGE_TYPES,
        FileBlock,
        ToolReturn,
        document_block,
        document_of,
        image_block,
        image_type,
        source_document_block,
    )
    from .isolation import mark_isolated, requires_isolation
    from .middleware import Middleware, Next, ToolCall
    from .permission import PermissionDecision, PermissionPolicy
    from .prepare import ToolPrepare
    from .registry import ToolRegistry, is_tool_name
    from .retry import ModelRetry
    from .schema import ToolSchema
    from .source import (
        FunctionToolSource,
        ToolChanges,
        ToolSource,
        ToolSourceFunction,
        tool_source,
    )
    from .strict import StrictForm, strict_form
    from .tool import BoundArguments, ContextTool, FunctionTool, ToolAnnotations, ToolDyn
    from .tool_views import (
        ToolFilter,
        ToolSourceView,
        each_step,
        filtered_tools,
        prefixed_tools,
        renamed_tools,
    )
    from .truncation import truncate_output
    from .usage import RunUsage

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".context": (
        "Charger",
        "ProgressReporter",
        "RunContext",
    ),
    ".errors": (
        "ExternalToolCallError",
        "MCPBridgeError",
        "ToolCallError",
        "ToolContextError",
        "ToolError",
        "ToolFileError",
        "ToolInputError",
        "ToolIsolationError",
        "ToolNotFoundError",
        "ToolPermissionError",
        "ToolPrepareError",
        "ToolRegistrationError",
        "ToolSourceError",
        "ToolStepSourceError",
        "ToolTimeoutError",
        "ToolViewError",
        "StrictSchemaError",
    ),
    ".external": ("ExternalTool", "is_external"),
    ".files": (
        "DOCUMENT_TYPE",
        "IMAGE_TYPES",
        "FileBlock",
        "ToolReturn",
        "document_block",
        "document_of",
        "image_block",
        "image_type",
        "source_document_block",
    ),
    ".isolation": (
        "mark_isolated",
        "requires_isolation",
    ),
    ".middleware": (
        "Middleware",
        "Next",
        "ToolCall",
    ),
    ".permission": (
        "PermissionDecision",
        "PermissionPolicy",
    ),
    ".prepare": ("ToolPrepare",),
    ".registry": ("ToolRegistry", "is_tool_name"),
    ".retry": ("ModelRetry",),
    ".schema": ("ToolSchema",),
    ".source": (
        "FunctionToolSource",
        "ToolChanges",
        "ToolSource",
        "ToolSourceFunction",
        "tool_source",
    ),
    ".strict": ("StrictForm", "strict_form"),
    ".tool": (
        "BoundArguments",
        "ContextTool",
        "FunctionTool",
        "ToolAnnotations",
        "ToolDyn",
    ),
    ".tool_views": (
        "ToolFilter",
        "ToolSourceView",
        "each_step",
        "filtered_tools",
        "prefixed_tools",
        "renamed_tools",
    ),
    ".truncation": ("truncate_output",),
    ".usage": ("RunUsage",),
}

__all__ = [
    "DOCUMENT_TYPE",
    "IMAGE_TYPES",
    "BoundArguments",
    "Charger",
    "ContextTool",
    "ExternalTool",
    "ExternalToolCallError",
    "FileBlock",
    "FunctionTool",
    "FunctionToolSource",
    "MCPBridgeError",
    "Middleware",
    "ModelRetry",
    "Next",
    "PermissionDecision",
    "PermissionPolicy",
    "ProgressReporter",
    "RunContext",
    "RunUsage",
    "StrictForm",
    "StrictSchemaError",
    "ToolAnnotations",
    "ToolCall",
    "ToolCallError",
    "ToolChanges",
    "ToolContextError",
    "ToolDyn",
    "ToolError",
    "ToolFileError",
    "ToolFilter",
    "ToolInputError",
    "ToolIsolationError",
    "ToolNotFoundError",
    "ToolPermissionError",
    "ToolPrepare",
    "ToolPrepareError",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolReturn",
    "ToolSchema",
    "ToolSource",
    "ToolSourceError",
    "ToolSourceFunction",
    "ToolSourceView",
    "ToolStepSourceError",
    "ToolTimeoutError",
    "ToolViewError",
    "document_block",
    "document_of",
    "each_step",
    "filtered_tools",
    "image_block",
    "image_type",
    "is_external",
    "is_tool_name",
    "isolation",
    "mark_isolated",
    "permission",
    "prefixed_tools",
    "renamed_tools",
    "requires_isolation",
    "source_document_block",
    "strict_form",
    "timeout",
    "tool",
    "tool_source",
    "truncate_output",
]


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
