"""Real entry points: the fixture distribution under tests/fixtures/plugins, installed by
`scripts/setup`, is found through its `pyproject.toml` entry point; listing plugins stays cheap.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neuron_turn.loop.provider import ProviderMessage, ProviderRequest, TextPart
from neuron_turn.plugins import PluginManager, PluginSettings

FIXTURE = "fixture-plugin"
SCRIPTS = Path(sys.executable).parent


def fixture_installed() -> bool:
    return any(ep.name == FIXTURE for ep in importlib.metadata.entry_points(group="neuron_turn"))


def test_the_fixture_plugin_is_installed_for_real() -> None:
    # Never skipped: a missing install must fail, not hide the tests below.
    assert fixture_installed(), "run scripts/setup --test to install the fixture plugin"


def only_fixture() -> PluginManager:
    manager = PluginManager()
    manager.load_entry_points(PluginSettings(load=frozenset({FIXTURE})))
    return manager


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NEURON_LOAD_PLUGINS": FIXTURE}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)


def test_the_fixture_entry_point_is_declared_by_its_distribution() -> None:
    (entry_point,) = [
        ep for ep in importlib.metadata.entry_points(group="neuron_turn") if ep.name == FIXTURE
    ]
    assert entry_point.value == "neuron_fixture_plugin.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "neuron-fixture-plugin"


async def test_the_fixture_plugin_loads_through_its_real_entry_point() -> None:
    manager = only_fixture()
    assert manager.failures == ()
    (info,) = [info for info in manager.plugins() if info.name == FIXTURE]
    assert info.origin.distribution == "neuron-fixture-plugin"
    assert info.origin.version == "0.1.0"
    assert info.hooks == (
        "register_providers",
        "register_hooks",
        "register_tools",
        "register_approval_policies",
        "register_guardrails",
        "register_output_validators",
        "register_output_types",
    )
    assert info.registered["providers"] == ("fixture",)
    assert info.registered["tools"] == ("fixture_add", "fixture_ask_user")
    assert info.registered["hooks"] == ("fixture-plugin.fixture_observer",)
    assert info.registered["approval_policies"] == ("predicate large_numbers",)
    assert info.registered["guardrails"] == (
        "fixture_no_forbidden (input)",
        "fixture_no_classified (output)",
    )
    assert info.registered["output_validators"] == ("fixture_no_drafts",)
    assert info.registered["output_types"] == ("fixture_sum", "fixture_triage")
    provider = manager.get_provider("fixture:echo")
    request = ProviderRequest(model="echo", messages=[ProviderMessage("user", [TextPart("hi")])])
    assert (await provider.complete(request)).content == [TextPart("echo: hi")]
    assert [tool.name for tool in manager.tools_by_name(["fixture_add"])] == ["fixture_add"]


@pytest.mark.parametrize(
    "command",
    [(str(SCRIPTS / "neuron-turn"), "plugins"), (sys.executable, "-m", "neuron_turn", "plugins")],
    ids=["console-script", "python-m"],
)
def test_neuron_turn_plugins_lists_the_fixture(command: tuple[str, ...]) -> None:
    done = run(*command)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    start = lines.index("fixture-plugin (neuron-fixture-plugin 0.1.0)")
    assert lines[start + 1 : start + 10] == [
        "  entry point: fixture-plugin = neuron_fixture_plugin.plugin",
        "  implements: register_providers, register_hooks, register_tools, "
        "register_approval_policies, register_guardrails, register_output_validators, "
        "register_output_types",
        "  providers: fixture",
        "  hooks: fixture-plugin.fixture_observer",
        "  tools: fixture_add, fixture_ask_user",
        "  approval policies: predicate large_numbers",
        "  guardrails: fixture_no_forbidden (input), fixture_no_classified (output)",
        "  output validators: fixture_no_drafts",
        "  output types: fixture_sum, fixture_triage",
    ]


def test_neuron_turn_plugins_json_lists_the_fixture() -> None:
    done = run(str(SCRIPTS / "neuron-turn"), "plugins", "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    (fixture,) = [p for p in listing["plugins"] if p["name"] == FIXTURE]
    assert fixture["distribution"] == "neuron-fixture-plugin"
    assert fixture["entry_point"] == "neuron_fixture_plugin.plugin"
    assert fixture["registered"]["providers"] == ["fixture"]
    assert listing["failures"] == []


def provider_packages() -> list[str]:
    return sorted(
        ep.value.split(":")[0].split(".")[0]
        for ep in importlib.metadata.entry_points(group="neuron_turn")
        if ep.dist is not None and ep.dist.name.startswith("neuron-provider-")
    )


HEAVY = [name for name in ("httpx", "genai_prices") if importlib.util.find_spec(name)]


@pytest.mark.skipif(not provider_packages(), reason="no provider plugin is installed")
def test_listing_plugins_imports_no_heavy_provider_module() -> None:
    script = textwrap.dedent(
        """
        import contextlib, io, json, sys
        import neuron_turn.cli
        before = set(sys.modules)
        with contextlib.redirect_stdout(io.StringIO()):
            neuron_turn.cli.main(["plugins"])
        print(json.dumps({"before": sorted(before), "after": sorted(sys.modules)}))
        """
    )
    # Every installed plugin, not only the fixture: this is about their entry points.
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    added = set(modules["after"]) - set(modules["before"])
    assert sorted(m for m in added if m.split(".")[0] in HEAVY) == []
    for package in provider_packages():
        assert f"{package}.plugin" in added or package in modules["before"]
        assert f"{package}.provider" not in modules["after"], f"{package} imports its provider"
