"""Every package's `__all__` is complete and sorted."""

from __future__ import annotations
import __future__

import importlib
import importlib.metadata
import inspect
import pkgutil
import typing
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(
    path.name.replace("-", "_")
    for path in (ROOT / "plugins").glob("*")
    if (path / "pyproject.toml").is_file()
)
PACKAGES = ["layer0", "neuron_hooks", "neuron_tool", "neuron_turn", *PLUGINS]


def _isort_order(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[0].isupper() else (2, name)


def _public_names(module: ModuleType) -> set[str]:
    """Names a user can import from `module`, lazily resolved ones included."""
    names = set(getattr(module, "__all__", ()))
    for name in dir(module):
        value = getattr(module, name)
        if (
            name.startswith("_")
            or inspect.ismodule(value)
            or isinstance(value, __future__._Feature)
            or value is getattr(typing, name, None)
        ):
            continue
        names.add(name)
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_all_lists_every_public_name_sorted(package: str) -> None:
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_order), f"{package}.__all__ is not sorted"
    assert set(exported) == _public_names(module), f"{package}.__all__ is incomplete"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_has_a_docstring(package: str) -> None:
    module = importlib.import_module(package)
    missing = [
        name
        for name in module.__all__
        if (inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name)))
        and not inspect.getdoc(getattr(module, name))
    ]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_package_is_typed(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    assert (Path(module.__file__).parent / "py.typed").is_file()


def test_every_submodule_imports() -> None:
    for package in ["layer0", "neuron_hooks", "neuron_tool", "neuron_turn"]:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if info.name.endswith("__main__"):
                continue
            importlib.import_module(info.name)


# What users import today; a layout change must not take any of it away.
NEURON_TURN_API = frozenset(
    {
        "EFFECT_TOOL_NAMES",
        "ContentPart",
        "ContextStrategy",
        "DuplicatePluginError",
        "ImagePart",
        "InvalidModelError",
        "InvalidRequestError",
        "ModelNotFoundError",
        "NameConflictError",
        "NeuronTurn",
        "NeuronTurnConfig",
        "NeuronWarning",
        "NoCompaction",
        "NoProviderConfiguredError",
        "NonRetryableProviderError",
        "PluginError",
        "PluginFactoryError",
        "PluginFailure",
        "PluginHook",
        "PluginHookError",
        "PluginInfo",
        "PluginLoadError",
        "PluginLoadWarning",
        "PluginManager",
        "PluginTool",
        "Provider",
        "ProviderAuthenticationError",
        "ProviderConflictError",
        "ProviderConnectionError",
        "ProviderError",
        "ProviderMessage",
        "ProviderOverloadedError",
        "ProviderRequest",
        "ProviderResponse",
        "ProviderResponseError",
        "ProviderServerError",
        "ProviderTimeoutError",
        "RateLimitError",
        "RawPart",
        "RegisterContextStrategy",
        "RegisterEnvironment",
        "RegisterHook",
        "RegisterOrchestrator",
        "RegisterProvider",
        "RegisterStateStore",
        "RegisterTool",
        "RegisterWorker",
        "RetryableProviderError",
        "Role",
        "SlidingWindow",
        "StopReason",
        "TextPart",
        "ThinkingPart",
        "TokenUsage",
        "ToolResultPart",
        "ToolUsePart",
        "UnknownContextStrategyError",
        "UnknownEnvironmentError",
        "UnknownNameError",
        "UnknownOrchestratorError",
        "UnknownProviderError",
        "UnknownStateStoreError",
        "UnknownToolError",
        "UnknownWorkerError",
        "Worker",
        "build_hook_registry",
        "get_context_strategy",
        "get_environment",
        "get_orchestrator",
        "get_plugin_manager",
        "get_provider",
        "get_state_store",
        "get_worker",
        "hookimpl",
        "parse_scope",
        "registered_hooks",
        "registered_tools",
        "tools_by_name",
    }
)


def test_neuron_turn_keeps_its_public_api_whatever_the_layout() -> None:
    import neuron_turn
    import neuron_turn.testing
    from neuron_turn.plugins import hookspecs

    assert set(neuron_turn.__all__) >= NEURON_TURN_API
    assert set(neuron_turn.testing.__all__) >= {
        "FunctionProvider",
        "ScriptExhaustedError",
        "ScriptedProvider",
        "text_response",
        "tool_call_response",
    }
    assert hookspecs.PROJECT == "neuron_turn"
    assert set(hookspecs.HOOK_NAMES) >= {
        "register_providers",
        "register_context_strategies",
        "register_hooks",
        "register_tools",
        "register_state_stores",
        "register_orchestrators",
        "register_workers",
        "register_environments",
    }
    scripts = importlib.metadata.entry_points(group="console_scripts", name="neuron-turn")
    assert [script.value for script in scripts] == ["neuron_turn.cli:console_main"]


_LAZY = ["layer0", "neuron_hooks", "neuron_tool", "neuron_turn"]


@pytest.mark.parametrize("package", _LAZY)
def test_every_lazily_exported_name_is_imported_for_type_checkers_too(package: str) -> None:
    """Type checkers and the API reference see a lazy name only through `if TYPE_CHECKING:`."""
    import ast

    module = importlib.import_module(package)
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    checked = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in ast.walk(node)
        if isinstance(inner, ast.ImportFrom)
        for alias in inner.names
    }
    eager = {  # bound when the package is imported: imports and definitions at its top
        alias.asname or alias.name.split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert set(module.__all__) - eager - checked == set()
