"""`scripts/setup`: what it installs with and without `--test`, and the progress it shows.

Runs under `env -i` with only HOME and PATH, as on a fresh machine: nothing of
this machine's environment (CA variables, PIP_*, NEURON_*) may be needed. The
packages are already installed (`scripts/test` ran the setup first), so a
real run only checks them: it is quick, and it is the same run a user repeats.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.loopback import Server, json_server
from tests.terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup"


def bare_path() -> str:
    """The PATH of a fresh machine: the system's folders and where python3 and npm are."""
    folders = ["/usr/local/bin", "/usr/bin", "/bin"]
    for program in ("python3", "npm", "node"):
        found = shutil.which(program)
        assert found is not None, f"{program} is needed on PATH"
        folders.append(str(Path(found).parent))
    return ":".join(dict.fromkeys(folders))


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": bare_path(), **extra}


def plan(*options: str) -> list[str]:
    done = subprocess.run(
        ["env", "-i", f"PATH={bare_path()}", "bash", str(SETUP), "--dry-run", *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_plain_setup_installs_no_test_only_plugin_and_removes_one_left_over() -> None:
    lines = plan()
    text = "\n".join(lines)
    assert "tests/fixtures" not in text
    assert "test-mcp-servers" not in text
    removal = "remove test-only plugins if installed (neuron-fixture-plugin)"
    assert any(removal in line for line in lines)
    [installs] = [line for line in lines if line.startswith("setup: pip installs: ")]
    assert "-e plugins/neuron-provider-local[test]" in installs


def test_setup_for_tests_installs_the_fixture_plugin_and_the_test_servers() -> None:
    lines = plan("--test")
    [installs] = [line for line in lines if line.startswith("setup: pip installs: ")]
    assert installs.endswith("-e tests/fixtures/plugins/neuron-fixture-plugin")
    assert any("step test-mcp-servers" in line for line in lines)
    assert not any("remove test-only" in line for line in lines)


def test_an_unknown_option_is_refused_before_anything_runs() -> None:
    done = subprocess.run(["bash", str(SETUP), "--tests"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr == (
        "scripts/setup: unknown option '--tests' "
        "(usage: scripts/setup [--test | --bench] [--dry-run])\n"
    )


def test_setup_on_a_terminal_counts_each_step_to_done(tmp_path: Path) -> None:
    command = ["bash", str(SETUP), "--test"]
    with Terminal(command, env=bare_env(tmp_path), cwd=str(tmp_path), timeout=300) as terminal:
        # The first line is there at once, before pip has even started.
        pip = r"setup: \[1/\d+\] install \d+ distributions into \.venv \(pip\)"
        terminal.expect(pip + " …")
        terminal.expect(pip + r": done \(\d+s\)")
        terminal.expect(r"step test-mcp-servers: done \(\d+s\)")
        terminal.expect(r"setup: done in \d+s")
        assert terminal.wait() == 0, terminal.output


def test_setup_piped_says_each_step_once(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(SETUP), "--test"],
        env=bare_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    steps = [line for line in lines if line.startswith("setup: [")]
    count = len(steps)
    assert re.fullmatch(
        rf"setup: \[1/{count}\] install \d+ distributions into \.venv \(pip\) …", steps[0]
    )
    last = sorted(step.name for step in (SETUP.parent / "setup.d").iterdir())[-1]
    assert steps[-1] == f"setup: [{count}/{count}] step {last} …"
    assert lines[-1].startswith("setup: done in ")
    assert "\r" not in done.stderr and "\x1b" not in done.stderr


@pytest.fixture
def registry() -> Iterator[tuple[str, Server]]:
    """A loopback npm registry that knows no package and records what was asked."""
    with json_server(lambda request: (404, {"error": "Not found"})) as running:
        yield f"{running.url}/", running


def test_the_mcp_servers_step_keeps_npms_global_config(
    tmp_path: Path, registry: tuple[str, Server]
) -> None:
    # npm's global config is {prefix}/etc/npmrc: here it names the loopback registry (on
    # a user's machine, a cafile). `npm install --prefix DIR` would read DIR/etc/npmrc
    # instead and go to registry.npmjs.org, through a proxy that is not there.
    url, asked = registry
    prefix = tmp_path / "npm-global"
    (prefix / "etc").mkdir(parents=True)
    (prefix / "etc" / "npmrc").write_text(f"registry={url}\n")
    checkout = tmp_path / "checkout"
    (checkout / "scripts" / "setup.d").mkdir(parents=True)
    step = checkout / "scripts" / "setup.d" / "test-mcp-servers"
    shutil.copy2(ROOT / "scripts" / "setup.d" / "test-mcp-servers", step)
    # The Python server is already in this .venv, so the step goes straight to npm.
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    env = bare_env(
        tmp_path / "home",
        npm_config_prefix=str(prefix),
        npm_config_fetch_retries="0",
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1",
    )
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        [str(step)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    # The loopback registry knows nothing, so npm fails: after asking it, not anyone else.
    assert done.returncode != 0
    paths = " ".join(request.path for request in asked.requests)
    assert "@modelcontextprotocol%2fserver-everything" in paths, done.stderr
    assert "E404" in done.stderr or "404" in done.stderr, done.stderr
    assert not (checkout / ".cache" / "npm" / "etc").exists()
    assert os.listdir(checkout / ".cache" / "npm") == ["package.json"]


def test_the_mcp_servers_step_installs_node_and_npm_through_apt_on_a_machine_without(
    tmp_path: Path,
) -> None:
    # A PATH with none of Node.js: only the few programs the step itself calls.
    tools = tmp_path / "bin"
    tools.mkdir()
    for program in ("bash", "dirname", "mkdir", "grep", "chmod"):
        found = shutil.which(program)
        assert found is not None
        (tools / program).symlink_to(found)
    checkout = tmp_path / "checkout"
    (checkout / "scripts" / "setup.d").mkdir(parents=True)
    step = checkout / "scripts" / "setup.d" / "test-mcp-servers"
    shutil.copy2(ROOT / "scripts" / "setup.d" / "test-mcp-servers", step)
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    # apt, as the step calls it: it records what it was asked for, and Debian's nodejs
    # brings no npm, so npm comes from a second install (which records each install).
    asked = tmp_path / "apt.log"
    fake_apt = checkout / "scripts" / "apt-install"
    fake_apt.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >>{asked}\n'
        'if [ "${@: -1}" = npm ]; then\n'
        f"  printf '#!/usr/bin/env bash\\necho \"npm $*\" >>{asked}\\n' >{tools}/npm\n"
        f"  chmod +x {tools}/npm\n"
        "fi\n"
    )
    fake_apt.chmod(0o755)
    env = {"HOME": str(tmp_path), "PATH": str(tools)}

    done = subprocess.run(
        [str(tools / "bash"), str(step)], env=env, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    lines = asked.read_text().splitlines()
    assert lines[:2] == [
        "Node.js (for the MCP test servers) nodejs",
        "npm (for the MCP test servers) npm",
    ]
    assert lines[2].startswith("npm install ") and "server-everything@" in lines[2]
