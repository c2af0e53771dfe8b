"""Running one tool call in an environment, and looking for leftover processes in /proc."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from layer0 import EnvironmentSpec, TurnInput, TurnOutput
from neuron_env_sandbox import TurnRecipe
from neuron_turn import ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

FIXTURE = "tests.plugins.env_sandbox.fixture_tools"
TOOLS = ("read_file", "read_env", "connect", "spin", "hog", "hang", "crash", "shell", "python")
RECIPE = TurnRecipe(model="scripted:test", tools=TOOLS, plugins=(FIXTURE,), effect_tools=False)


@dataclass
class Call:
    """A tool call's result as the model saw it, and the turn's output."""

    result: ToolResultPart
    output: TurnOutput

    @property
    def value(self) -> Any:
        """The result's JSON, parsed (`shell`/`python` return objects)."""
        return json.loads(self.result.content)


def scripted(tool: str, arguments: dict[str, Any]) -> ScriptedProvider:
    """A provider that calls `tool` once, then answers "done"."""
    call = ToolUsePart(id="call-1", name=tool, input=arguments)
    return ScriptedProvider([tool_call_response(call), text_response("done")])


async def call_tool(
    environment_cls: Any,
    tool: str,
    arguments: dict[str, Any],
    *,
    spec: EnvironmentSpec | None = None,
    session: str | None = None,
    **options: Any,
) -> Call:
    """Run a turn in a new environment of `environment_cls` that makes one call of `tool`."""
    provider = scripted(tool, arguments)
    recipe = RECIPE.model_copy(update={"tools": (tool,)})
    environment = environment_cls(recipe, provider=provider, **options)
    turn_input = TurnInput(message="go", trigger="user", session=session)
    output = await environment.run(turn_input, spec or EnvironmentSpec())
    (result,) = provider.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart)
    return Call(result=result, output=output)


def uid_processes(uid: int) -> list[int]:
    """The pids of running processes whose real uid is `uid` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in "ZX":
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"
