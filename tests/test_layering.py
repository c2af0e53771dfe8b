"""The dependency rule of architecture.md: arrows point down only, and nothing imports in a circle.

Every import counts, at any depth of the module: function-level imports and
`TYPE_CHECKING` blocks included, since an import that runs late is still a
dependency a reader has to hold in mind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"layer0", "neuron_hooks", "neuron_tool", "neuron_turn"}
ALLOWED = {
    "layer0": set(),
    "neuron_hooks": {"layer0"},
    "neuron_tool": {"layer0"},
    "neuron_turn": {"layer0", "neuron_hooks", "neuron_tool"},
}
# Inside neuron_turn: the command line sits on the viewer, which sits on the plugin system,
# which sits on the loop. The package's own top-level modules (`__init__`, `__main__`,
# `testing`) may use any of them.
TURN_LAYERS = ["loop", "plugins", "viewer", "cli"]
PACKAGE_ROOTS = [ROOT, *sorted(p for p in (ROOT / "plugins").glob("*") if p.is_dir())]
# The plugins' packages sit above the core: no core package may import one.
PLUGIN_PACKAGES = {
    top.name
    for root in PACKAGE_ROOTS[1:]
    for top in root.iterdir()
    if (top / "__init__.py").is_file()
}


def _imported_packages(path: Path) -> set[str]:
    return {name.split(".")[0] for name, _ in _imported_modules(path, "")}


def _imported_modules(path: Path, module: str) -> Iterator[tuple[str, str]]:
    """Yield what `path` (the module called `module`) imports, relative imports resolved.

    Each item is `(name, fallback)`: `from package import name` gives
    `("package.name", "package")`, since `name` may be a submodule or a name
    defined in `package`; a plain `import a.b` gives `("a.b", "a.b")`.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            yield from ((f"{base}.{alias.name}", base) for alias in node.names)


def _modules() -> dict[str, Path]:
    """Every module of ours (core and plugins), by dotted name."""
    found: dict[str, Path] = {}
    for root in PACKAGE_ROOTS:
        for top in root.iterdir():
            if not (top / "__init__.py").is_file() or not top.name.startswith(
                ("layer0", "neuron_")
            ):
                continue
            for path in sorted(top.rglob("*.py")):
                parts = list(path.relative_to(root).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = path
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports.

    `from package import name` depends on the submodule `package.name` when
    there is one, and on `package` itself only when `name` is not a module.
    """
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for candidate, base in _imported_modules(path, name):
            if candidate in modules:
                targets.add(candidate)
            elif base in modules:
                targets.add(base)
        graph[name] = targets - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _turn_layer(module: str) -> int | None:
    """The layer of a `neuron_turn.<layer>...` module (its package included), else None."""
    parts = module.split(".")
    if parts[0] != "neuron_turn" or len(parts) < 2 or parts[1] not in TURN_LAYERS:
        return None
    return TURN_LAYERS.index(parts[1])


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_packages_below_it(package: str) -> None:
    offences = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for imported in _imported_packages(path) & ((OURS | PLUGIN_PACKAGES) - {package}):
            if imported not in ALLOWED[package]:
                offences.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert offences == []


def test_neuron_turn_cli_is_above_plugins_which_are_above_the_loop() -> None:
    offences = []
    for module, targets in sorted(_graph().items()):
        layer = _turn_layer(module)
        if layer is None:
            continue
        for target in sorted(targets):
            above = target == "neuron_turn" or (_turn_layer(target) or 0) > layer
            if above:
                offences.append(f"{module} imports {target}, which is above it")
    assert offences == []


def test_neuron_turn_keeps_every_module_in_the_folder_of_its_concern() -> None:
    loose = sorted(
        path.name
        for path in (ROOT / "neuron_turn").glob("*.py")
        if path.name not in {"__init__.py", "__main__.py", "testing.py"}
    )
    assert loose == []


def test_no_module_imports_in_a_circle() -> None:
    assert _cycles(_graph()) == []


def test_layer0_does_no_io() -> None:
    io_modules = {"httpx", "sqlite3", "socket", "asyncio", "subprocess", "pluggy", "jsonschema"}
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "layer0").rglob("*.py"))
        for name in _imported_packages(path) & io_modules
    ]
    assert offences == []


def test_rule_check_catches_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from neuron_turn import NeuronTurn\nimport neuron_tool.registry\n")
    assert _imported_packages(module) == {"neuron_turn", "neuron_tool"}


def test_relative_imports_resolve_against_the_importing_module(tmp_path: Path) -> None:
    module = tmp_path / "turn.py"
    module.write_text(
        "from ..plugins import get_plugin_manager\nfrom . import provider\n"
        "def late():\n    from ..cli._run import run_turn\n"
    )
    found = set(_imported_modules(module, "neuron_turn.loop.turn"))
    assert found == {
        ("neuron_turn.plugins.get_plugin_manager", "neuron_turn.plugins"),
        ("neuron_turn.loop.provider", "neuron_turn.loop"),
        ("neuron_turn.cli._run.run_turn", "neuron_turn.cli._run"),
    }


def test_cycle_check_finds_a_circle_of_three() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
