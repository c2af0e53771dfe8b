"""External tools: the turn pauses on their calls, and the caller's answer resumes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    Continue,
    DispatchFailed,
    EffectPolicy,
    Halt,
    HookAction,
    HookContext,
    HookPoint,
    ModifyToolInput,
    NonRetryableError,
    ObserverHalt,
    SessionScope,
    SkipTool,
    TurnConfig,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_hooks import FunctionHook, HookRegistry
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ExternalTool, ToolDyn, ToolRegistry, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    ExternalCallApprovedError,
    NeuronTurn,
    NeuronTurnConfig,
    PendingCall,
    ProviderResponse,
    ToolResultPart,
    pending_approvals,
    resume_input,
    with_external_tools,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..plugins.orch_local.test_answers import delegate_call, results_sent
from .support import answer, ask, build, call, calls

RAN: list[str] = []


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    RAN.append(city)
    return f"sunny in {city}"


def pick_colour(prompt: str, choices: list[str]) -> str:
    """Ask the user to pick a colour in their browser.

    Args:
        prompt: What to show the user.
        choices: The colours offered.
    """
    raise AssertionError("an external tool's function never runs")


PICK = ExternalTool.like(pick_colour)
PICKING = call("c2", "pick_colour", prompt="Which?", choices=["red", "blue"])
CONFIG = NeuronTurnConfig(model="m")


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def _turn(
    script: list[ProviderResponse], store: SqliteStore, config: NeuronTurnConfig = CONFIG
) -> tuple[LocalOrchestrator, ScriptedProvider]:
    provider = ScriptedProvider(script)
    tools = ToolRegistry([weather, PICK])
    turn = NeuronTurn(provider, tools=tools, state=store, config=config)
    return LocalOrchestrator({"a": turn}, store), provider


async def _pause(db: Path, *parts: JsonValue) -> TurnOutput:
    async with SqliteStore(db) as store:
        asks = calls(call("c1", "weather", city="Oslo"), PICKING)
        orchestrator, _ = _turn([asks], store)
        return await orchestrator.dispatch("a", ask("plan my day", session="s"))


async def _resume(
    db: Path, decisions: list[Decision], config: NeuronTurnConfig = CONFIG
) -> tuple[TurnOutput, ScriptedProvider]:
    # New objects on the same file: the pause lives in the store, not in memory.
    async with SqliteStore(db) as store:
        orchestrator, provider = _turn([answer("Red it is.")], store, config)
        output = await orchestrator.dispatch("a", resume_input("s", decisions))
    return output, provider


async def test_an_external_call_is_handed_out_unrun_and_the_turn_pauses_on_it(
    tmp_path: Path,
) -> None:
    output = await _pause(tmp_path / "s.db")

    assert output.exit_reason == AWAITING_APPROVAL
    assert pending_approvals(output) == [
        PendingCall(
            id="c2",
            name="pick_colour",
            input={"prompt": "Which?", "choices": ["red", "blue"]},
            external=True,
        )
    ]
    assert RAN == ["Oslo"]  # the free call of the same answer ran
    async with SqliteStore(tmp_path / "s.db") as store:
        history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list)
    assert "sunny in Oslo" in str(history[-1])
    assert "c2" not in str(history[-1])  # no result for the external call yet


async def test_the_callers_answer_is_the_calls_result_and_the_model_goes_on(
    tmp_path: Path,
) -> None:
    await _pause(tmp_path / "s.db")
    done, provider = await _resume(tmp_path / "s.db", [Decision.answer("c2", {"picked": "red"})])

    assert done.exit_reason == "complete"
    assert done.message.as_text() == "Red it is."
    assert results_sent(provider, 1) == [
        ToolResultPart("c1", "sunny in Oslo", is_error=False),
        ToolResultPart("c2", '{"picked":"red"}', is_error=False),
    ]
    assert RAN == ["Oslo"]


async def test_an_answer_marked_as_an_error_reaches_the_model_as_a_failed_call(
    tmp_path: Path,
) -> None:
    await _pause(tmp_path / "s.db")
    decision = Decision.answer("c2", "the user closed the dialog", is_error=True)
    _, provider = await _resume(tmp_path / "s.db", [decision])

    assert results_sent(provider, 1)[-1] == ToolResultPart(
        "c2", "the user closed the dialog", is_error=True
    )


async def test_an_external_call_may_be_denied_and_the_model_reads_why(tmp_path: Path) -> None:
    await _pause(tmp_path / "s.db")
    _, provider = await _resume(tmp_path / "s.db", [Decision.deny("c2", "no browser here")])

    assert results_sent(provider, 1)[-1] == ToolResultPart(
        "c2", "Denied by a person: no browser here", is_error=True
    )


async def test_approving_an_external_call_is_refused_and_the_session_stays_paused(
    tmp_path: Path,
) -> None:
    await _pause(tmp_path / "s.db")
    with pytest.raises(DispatchFailed) as failed:
        await _resume(tmp_path / "s.db", [Decision.approve("c2")])
    assert isinstance(failed.value.__cause__, ExternalCallApprovedError)
    assert "call 'c2' is of external tool 'pick_colour'" in str(failed.value)

    # Nothing ran and nothing was lost: the right answer still resumes it.
    done, _ = await _resume(tmp_path / "s.db", [Decision.answer("c2", "blue")])
    assert done.exit_reason == "complete"
    assert RAN == ["Oslo"]


async def test_an_external_call_whose_input_does_not_fit_is_refused_at_once_not_handed_out(
    tmp_path: Path,
) -> None:
    bad = call("c1", "pick_colour", prompt="Which?", choices="red")
    async with SqliteStore(tmp_path / "s.db") as store:
        orchestrator, provider = _turn([calls(bad), answer("sorry")], store)
        output = await orchestrator.dispatch("a", ask("pick", session="s"))

    assert output.exit_reason == "complete"
    assert pending_approvals(output) == []
    [result] = results_sent(provider, 2)
    assert result.is_error
    assert "choices" in result.content


async def test_an_external_tool_not_allowed_in_the_turn_is_refused_not_handed_out() -> None:
    store = InMemoryStore()
    provider = ScriptedProvider([calls(PICKING), answer("ok")])
    turn = NeuronTurn(provider, tools=ToolRegistry([weather, PICK]), state=store, config=CONFIG)
    only_weather = TurnConfig(allowed_tools=["weather"])

    output = await turn.execute(ask("pick", session="s", config=only_weather))

    assert output.exit_reason == "complete"
    assert results_sent(provider, 2) == [
        ToolResultPart("c2", "Error: the tool 'pick_colour' is not allowed in this turn", True)
    ]


async def test_a_standing_approval_of_the_tools_name_does_not_run_an_external_call() -> None:
    # A person approved "always" the calls of a pick_colour that ran here, which later
    # became an external tool: no standing decision can run what nothing here runs.
    store = InMemoryStore()
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["*"]))

    def agent(script: list[ProviderResponse], *tools: ToolDyn) -> LocalOrchestrator:
        model = ScriptedProvider(script)
        turn = NeuronTurn(model, tools=ToolRegistry(tools), state=store, config=config)
        return LocalOrchestrator({"a": turn}, store)

    ran_here = tool(pick_colour)
    asks = calls(call("c1", "pick_colour", prompt="?", choices=[]))
    await agent([asks], ran_here).dispatch("a", ask("pick", session="s"))
    always = resume_input("s", [Decision.approve("c1", always=True)])
    await agent([answer("done")], ran_here).dispatch("a", always)

    later = calls(call("c2", "pick_colour", prompt="?", choices=[]))
    held = await agent([later], PICK).dispatch("a", ask("again", session="s"))

    assert [(c.id, c.external) for c in pending_approvals(held)] == [("c2", True)]


async def test_a_delegated_agents_external_call_pauses_its_parent_and_the_answer_reaches_it() -> (
    None
):
    store = InMemoryStore()
    picker_model = ScriptedProvider([calls(PICKING), text_response("The user picked red.")])
    picker = NeuronTurn(picker_model, tools=ToolRegistry([PICK]), state=store, config=CONFIG)
    lead_model = ScriptedProvider(
        [tool_call_response(delegate_call("picker", "ask for a colour")), text_response("Red.")]
    )
    everything = EffectPolicy.everything()
    lead = NeuronTurn(
        lead_model, state=store, config=NeuronTurnConfig(model="m", effect_policy=everything)
    )
    orchestrator = LocalOrchestrator(
        {"lead": lead, "picker": picker}, store, policies={"lead": everything}
    )

    paused = await orchestrator.dispatch("lead", ask("pick", session="s1"))
    [held] = pending_approvals(paused)
    done = await orchestrator.dispatch(
        "lead", resume_input("s1", [Decision.answer("c1/c2", {"picked": "red"})])
    )

    assert (held.id, held.agent, held.external) == ("c1/c2", "picker", True)
    assert results_sent(picker_model, 2) == [ToolResultPart("c2", '{"picked":"red"}', False)]
    assert done.exit_reason == "complete"
    assert results_sent(lead_model, 2) == [ToolResultPart("c1", "The user picked red.", False)]


# Tools the caller offers for one call (`with_external_tools`), as a frontend does.


def _weather_only(
    store: SqliteStore, *script: ProviderResponse
) -> tuple[NeuronTurn, ScriptedProvider]:
    provider = ScriptedProvider(list(script))
    return NeuronTurn(provider, tools=ToolRegistry([weather]), state=store, config=CONFIG), provider


def _offered(provider: ScriptedProvider, request: int) -> list[str]:
    """The tools of `request` but the loop's own (memory tools, effect tools)."""
    return [
        t.name for t in provider.requests[request].tools if t.name in {"weather", "pick_colour"}
    ]


async def test_tools_offered_for_one_call_are_offered_then_kept_for_the_resume_of_its_pause(
    tmp_path: Path,
) -> None:
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, first = _weather_only(store, calls(PICKING))
        orchestrator = LocalOrchestrator({"a": turn}, store)
        paused = await orchestrator.dispatch(
            "a", with_external_tools(ask("pick", session="s"), [PICK])
        )
        # The resume carries no options: the pause kept the offered tools for it.
        turn, then = _weather_only(store, calls(call("c3", "pick_colour", prompt="?", choices=[])))
        orchestrator = LocalOrchestrator({"a": turn}, store)
        again = await orchestrator.dispatch("a", resume_input("s", [Decision.answer("c2", "red")]))

    assert _offered(first, 0) == ["weather", "pick_colour"]
    assert pending_approvals(paused)[0].external
    assert _offered(then, 0) == ["weather", "pick_colour"]
    assert [(c.id, c.external) for c in pending_approvals(again)] == [("c3", True)]
    assert turn.tools.names() == ["weather"]  # offered for those calls, not added to the agent


async def test_a_call_without_the_offer_does_not_see_the_tool(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, provider = _weather_only(store, answer("one"), answer("two"))
        await turn.execute(with_external_tools(ask("a"), [PICK]))
        await turn.execute(ask("b"))

    assert [_offered(provider, 0), _offered(provider, 1)] == [
        ["weather", "pick_colour"],
        ["weather"],
    ]


@pytest.mark.parametrize(
    ("offered", "named"),
    [
        ([ExternalTool("weather", "Not the weather tool.")], "'weather'"),
        ([ExternalTool("delegate", "Not the loop's.")], "'delegate'"),
        ([ExternalTool("broken", "Bad schema.", {"type": "objekt"})], "'broken'"),
    ],
)
async def test_an_offered_tool_whose_name_is_taken_or_schema_invalid_fails_the_turn_unrun(
    tmp_path: Path, offered: list[ExternalTool], named: str
) -> None:
    async with SqliteStore(tmp_path / "s.db") as store:
        turn, provider = _weather_only(store, answer("never"))
        with pytest.raises(NonRetryableError, match=r"\['external_tools'\].*" + named):
            await turn.execute(with_external_tools(ask("a"), offered))

    assert provider.requests == []


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ("pick", "external_tools must be a list of tools, not str"),
        ([{"name": "a b", "description": ""}], r"external_tools\[0\].name must be a tool name"),
        (
            [{"name": "x", "descripton": ""}],
            r"external_tools\[0\] has unknown keys \['descripton'\]",
        ),
        ([{"name": "x", "input_schema": []}], r"external_tools\[0\].input_schema must be"),
    ],
)
async def test_a_malformed_offer_fails_the_turn_naming_what_is_wrong(
    declared: JsonValue, message: str
) -> None:
    turn, provider = build([answer("never")])
    with pytest.raises(NonRetryableError, match=message):
        await turn.execute(ask("a", neuron_turn={"external_tools": declared}))

    assert provider.requests == []


def _hooked(
    script: list[ProviderResponse], store: InMemoryStore, *hooks: FunctionHook
) -> tuple[NeuronTurn, ScriptedProvider]:
    provider = ScriptedProvider(script)
    registry = HookRegistry()
    for hook in hooks:
        registry.add(hook)
    turn = NeuronTurn(provider, tools=[weather, PICK], hooks=registry, state=store, config=CONFIG)
    return turn, provider


def _pre(action: HookAction, seen: list[HookContext] | None = None) -> FunctionHook:
    async def decide(ctx: HookContext) -> HookAction:
        if seen is not None:
            seen.append(ctx)
        return action if ctx.tool_name == "pick_colour" else Continue()

    return FunctionHook(decide, points=[HookPoint.PRE_TOOL_USE])


async def test_pre_tool_use_hooks_meet_an_external_call_before_it_is_handed_out() -> None:
    seen: list[HookContext] = []
    turn, _ = _hooked([calls(PICKING)], InMemoryStore(), _pre(Continue(), seen))

    output = await turn.execute(ask("pick", session="s"))

    assert [(c.tool_name, c.tool_input) for c in seen] == [("pick_colour", PICKING.input)]
    assert [c.id for c in pending_approvals(output)] == ["c2"]


async def test_an_external_call_a_hook_skips_is_answered_unrun_and_never_handed_out() -> None:
    turn, provider = _hooked(
        [calls(PICKING), answer("ok")], InMemoryStore(), _pre(SkipTool(reason="no UI"))
    )

    output = await turn.execute(ask("pick", session="s"))

    assert output.exit_reason == "complete" and pending_approvals(output) == []
    assert results_sent(provider, 2) == [ToolResultPart("c2", "Skipped: no UI", is_error=True)]


async def test_an_external_call_a_hook_edits_is_handed_out_with_the_edit_once_it_fits() -> None:
    edited = {"prompt": "Pick one", "choices": ["green"]}
    turn, _ = _hooked([calls(PICKING)], InMemoryStore(), _pre(ModifyToolInput(new_input=edited)))
    output = await turn.execute(ask("pick", session="s"))
    assert [(c.id, c.input) for c in pending_approvals(output)] == [("c2", edited)]

    unfit = {"prompt": "Pick one", "choices": "green"}
    hook = _pre(ModifyToolInput(new_input=unfit))
    turn, provider = _hooked([calls(PICKING), answer("ok")], InMemoryStore(), hook)
    output = await turn.execute(ask("pick", session="s"))
    assert pending_approvals(output) == []
    [result] = results_sent(provider, 2)
    assert result.is_error and "choices" in result.content


async def test_a_hook_halting_an_external_call_ends_the_turn_with_nothing_handed_out() -> None:
    turn, _ = _hooked([calls(PICKING)], InMemoryStore(), _pre(Halt(reason="blocked")))

    output = await turn.execute(ask("pick", session="s"))

    assert output.exit_reason == ObserverHalt(reason="blocked")
    assert pending_approvals(output) == []


async def test_post_tool_use_hooks_see_the_callers_answer_and_may_halt_on_it() -> None:
    seen: list[tuple[str | None, str | None]] = []

    async def check(ctx: HookContext) -> HookAction:
        seen.append((ctx.tool_name, ctx.tool_result))
        return Halt(reason="leaked") if "secret" in (ctx.tool_result or "") else Continue()

    post = FunctionHook(check, points=[HookPoint.POST_TOOL_USE])
    store = InMemoryStore()
    turn, _ = _hooked([calls(PICKING), answer("Red.")], store, post)
    paused = await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("pick", session="s"))
    assert paused.exit_reason == AWAITING_APPROVAL and seen == []

    done = await LocalOrchestrator({"a": turn}, store).dispatch(
        "a", resume_input("s", [Decision.answer("c2", "red", is_error=False)])
    )
    assert done.exit_reason == "complete" and seen == [("pick_colour", "red")]

    turn, _ = _hooked([calls(PICKING)], store := InMemoryStore(), post)
    await LocalOrchestrator({"a": turn}, store).dispatch("a", ask("pick", session="s"))
    halted = await LocalOrchestrator({"a": turn}, store).dispatch(
        "a", resume_input("s", [Decision.answer("c2", "the secret is 42", is_error=True)])
    )
    assert halted.exit_reason == ObserverHalt(reason="leaked")
    assert seen[-1] == ("pick_colour", "the secret is 42")
