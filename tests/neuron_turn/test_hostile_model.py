"""Whatever a model sends, a turn ends cleanly, stays inside its grant and keeps every message.

Hypothesis writes the model's side of a conversation: text with lone
surrogates, tool calls to real, unknown and effect tools with arguments of
any JSON shape (huge integers, NaN, deep nesting, wrong types), effect
scopes outside the grant, any stop reason. Each conversation runs through
`LocalOrchestrator` on a store, then a second turn on the same session reads
the history back.
"""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    Continue,
    DispatchFailed,
    EffectPolicy,
    HookAction,
    HookContext,
    HookPoint,
    ModelError,
    SessionScope,
    StateStore,
    TurnError,
    TurnInput,
    TurnOutput,
    effect_refusal,
)
from layer0.testing import InMemoryStore
from neuron_hooks import FunctionHook, HookRegistry
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import (
    ModelRetry,
    RunContext,
    ToolRegistry,
    ToolReturn,
    image_block,
    is_tool_name,
    tool,
)
from neuron_turn import (
    AWAITING_APPROVAL,
    KEPT_COUNTS_KEY,
    STANDING_KEY,
    ApprovalPolicy,
    ContinuationError,
    Decision,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
    UsageLimits,
    carried_counts,
    output_validator,
    pending_approvals,
    resume_input,
    waiting_calls,
)
from neuron_turn.loop._convert import history_from_json
from neuron_turn.loop._well_formed import well_formed, well_formed_json
from neuron_turn.loop.effect_tools import EFFECT_TOOL_NAMES
from neuron_turn.loop.events import event_from_json, event_json
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from .support import add, appended, ask, echo

POLICY = EffectPolicy.of(["global", "delegate:helper"])
SESSION = "s1"

# Any text, lone surrogates included, and often one of the awkward cases outright.
_TEXT = st.text(st.characters(exclude_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "a\udcffb", "\ud83d\ude00", "\x00", "\u2028", "é"]
)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXT
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
)
_DEEP = st.integers(min_value=60, max_value=400).map(lambda depth: _nested(depth))
_SCOPES = st.sampled_from(
    ["global", "session:s1", "session:s2", "session:*", "workflow:w", "agent:w/a", "", "session:"]
)
_NAMES = (
    st.sampled_from(["add", "echo", "snap", "secret", "nope", "", *sorted(EFFECT_TOOL_NAMES)])
    | _TEXT
)
PAUSED = "neuron_turn/paused_options"
SECRET_RAN: list[JsonValue] = []
"""What the tool its `prepare` always leaves out was called with: nothing, ever."""


@tool(prepare=lambda ctx, schema: None)
async def secret(text: str) -> str:
    """Never offered: its prepare leaves it out of every turn."""
    SECRET_RAN.append(text)
    return "leaked"


@tool
async def snap(text: str) -> ToolReturn:
    """Take a picture of the text."""
    return ToolReturn(text, files=[image_block(b"\x89PNG\r\n\x1a\n")])


def _nested(depth: int) -> JsonValue:
    value: JsonValue = 1
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def _arguments(draw: st.DrawFn) -> JsonValue:
    """Mostly the shape a tool wants, with hostile values; sometimes anything at all."""
    shaped = {
        "a": draw(_SCALAR | _JSON),
        "b": draw(_SCALAR),
        "text": draw(_SCALAR),
        "scope": draw(_SCOPES | _TEXT),
        # The keys the loop keeps in a session among them: a model may touch neither.
        "key": draw(_TEXT | st.sampled_from([HISTORY_KEY, STANDING_KEY, KEPT_COUNTS_KEY, PAUSED])),
        "value": draw(_JSON | _DEEP),
        "agent": draw(st.sampled_from(["helper", "other", ""]) | _TEXT),
        "message": draw(_TEXT),
        "target": draw(_TEXT),
        "signal_type": draw(_TEXT),
        "state": draw(_JSON),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(shaped)), max_size=5, unique=True))
    whole: JsonValue = {key: shaped[key] for key in chosen}
    return draw(st.just(whole) | _JSON | _DEEP)


@st.composite
def _response(draw: st.DrawFn) -> ProviderResponse:
    parts: list[TextPart | ToolUsePart] = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if draw(st.booleans()):
            parts.append(TextPart(draw(_TEXT)))
        else:
            call_id = draw(st.sampled_from(["c1", "c2", ""]) | _TEXT)
            parts.append(ToolUsePart(call_id, draw(_NAMES), draw(_arguments())))
    stop = draw(st.sampled_from(["end_turn", "tool_use", "tool_use", "max_tokens"]))
    return ProviderResponse(content=tuple(parts), stop_reason=stop, usage=TokenUsage(10, 5))


async def _noop(ctx: HookContext) -> HookAction:
    return Continue()


def _provider(answers: list[ProviderResponse]) -> FunctionProvider:
    """Answers with `answers` in turn, then with "done" once they are used up."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        return answers.pop(0) if answers else text_response("done")

    return FunctionProvider(respond)


def _allowed(output: TurnOutput) -> None:
    for effect in output.effects:
        assert effect_refusal(POLICY, effect, SESSION) is None, effect


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same_json, a, b))
    return bool(a == b) and type(a) is type(b)


@output_validator
async def _even(ctx: RunContext[Any], text: str) -> str:
    if len(text) % 2:
        raise ModelRetry("an answer of even length, please")
    return text


def _turn(
    answers: list[ProviderResponse],
    store: StateStore | None = None,
    approval: ApprovalPolicy | None = None,
) -> NeuronTurn:
    """The agent under test: tools (one returning an image, one its `prepare` always leaves
    out), the effect tools as `POLICY` grants, a hook everywhere, a limit on its tool calls,
    a validator sending back answers of odd length, and `echo` ending the turn with its
    result."""
    hooks = HookRegistry()
    hooks.add(FunctionHook(_noop, points=list(HookPoint), name="noop"))
    config = NeuronTurnConfig(
        model="m",
        effect_policy=POLICY,
        max_turns=5,
        approval=approval,
        usage_limits=UsageLimits(tool_calls=6),
        output_validators=[_even],
        stop_at_tools=["echo"],
    )
    tools = ToolRegistry([add, echo, snap, secret])
    return NeuronTurn(_provider(answers), tools=tools, hooks=hooks, state=store, config=config)


async def _converse(script: list[ProviderResponse], store: StateStore) -> None:
    answers = list(script)
    turn = _turn(answers, store)
    helper = NeuronTurn(FunctionProvider(lambda request: text_response("helped")))
    orchestrator = LocalOrchestrator({"a": turn, "helper": helper}, store, default_policy=POLICY)
    try:
        output = await orchestrator.dispatch("a", ask("hi", session=SESSION))
    except DispatchFailed as exc:
        # The model's answer refused as a turn error (truncated, a tool stop
        # without a call), never anything else; it says what was wrong.
        assert isinstance(exc.__cause__, TurnError), exc
        return
    _allowed(output)
    sent = appended(output).messages
    wire = output.model_dump_json()
    assert TurnOutput.model_validate_json(wire).model_dump_json() == wire
    history = history_from_json(sent)
    stored = [p for m in history for p in m.content if isinstance(p, ToolUsePart)]
    made = [p for r in script for p in r.content if isinstance(p, ToolUsePart)]
    # Every call the model made is kept, in order, as it sent it (bar repaired text,
    # arguments refused for nesting too deep and an id another call of its answer
    # had, which gets a suffix), and every one has its result.
    assert len(stored) <= len(made)
    ids = [call.id for call in stored]
    assert len(set(ids)) == len(ids) and all(ids), ids
    # In a form every model API takes, whichever provider the session moves to.
    assert all(is_tool_name(call.name) and isinstance(call.input, dict) for call in stored)
    for kept, original in zip(stored, made, strict=False):
        own = well_formed(original.id)
        assert kept.id == own or kept.id.startswith(f"{own or 'call'}_")
        assert _same_json(kept.input, well_formed_json(original.input)) or kept.input == {}
    results = {p.tool_use_id for m in history for p in m.content if isinstance(p, ToolResultPart)}
    assert {call.id for call in stored} <= results
    # No call of the model's decided any for good, whatever key it named.
    assert await store.read(SessionScope(id=SESSION), STANDING_KEY) is None
    # No call reached the tool its prepare leaves out, by name or otherwise.
    assert SECRET_RAN == []
    # The next turn, answered plainly, reads the history back.
    answers.clear()
    follow = await orchestrator.dispatch("a", ask("again", session=SESSION))
    assert follow.exit_reason == "complete"


# The same examples on every run, so a landing is never decided by chance; raise
# max_examples (thousands pass) to look further.
_SETTINGS = settings(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(_SETTINGS, max_examples=200)
@example(  # a model calling by name the tool its prepare leaves out, and one returning a file
    [
        ProviderResponse(
            content=(
                ToolUsePart("c1", "secret", {"text": "let me in"}),
                ToolUsePart("c2", "snap", {"text": "cheese"}),
            ),
            stop_reason="tool_use",
            usage=TokenUsage(10, 5),
        )
    ]
)
@example(  # a model approving its own calls for good, in the key a person's decisions use
    [
        ProviderResponse(
            content=(
                ToolUsePart(
                    "c1",
                    "write_memory",
                    {
                        "scope": "session",
                        "key": STANDING_KEY,
                        "value": {"add": {"decision": "approve"}},
                    },
                ),
            ),
            stop_reason="tool_use",
            usage=TokenUsage(10, 5),
        )
    ]
)
@given(st.lists(_response(), min_size=1, max_size=4))
def test_any_model_answer_ends_the_turn_cleanly_within_the_grant(
    script: list[ProviderResponse],
) -> None:
    asyncio.run(_converse(script, InMemoryStore()))


async def _streamed(script: list[ProviderResponse]) -> None:
    """The same conversation streamed: every event goes out as a UTF-8 JSON line."""
    turn = _turn(list(script))
    try:
        async for event in turn.stream(ask("hi", session=SESSION)):
            line = json.dumps(event_json(event), ensure_ascii=False).encode("utf-8")
            assert event_from_json(json.loads(line)).kind == event.kind
    except TurnError as exc:  # the model's answer refused, saying why
        assert str(exc)


@settings(_SETTINGS, max_examples=100)
@given(st.lists(_response(), min_size=1, max_size=4))
def test_any_model_answer_streams_as_json_lines(script: list[ProviderResponse]) -> None:
    asyncio.run(_streamed(script))


@settings(_SETTINGS, max_examples=40)
@example(  # an infinity the store refused, and the turn's history with it
    [
        ProviderResponse(
            content=(ToolUsePart("c1", "add", math.inf),),
            stop_reason="end_turn",
            usage=TokenUsage(10, 5),
        )
    ]
)
@given(st.lists(_response(), min_size=1, max_size=3))
def test_any_model_answer_is_kept_in_a_real_database_file(script: list[ProviderResponse]) -> None:
    async def run() -> None:
        with tempfile.TemporaryDirectory() as directory:
            async with SqliteStore(Path(directory) / "state.db") as store:
                await _converse(script, store)

    asyncio.run(run())


async def _cut_off(script: list[ProviderResponse]) -> None:
    """The conversation rate limited after its answers; its part kept, its continuation run."""
    store = InMemoryStore()
    answers: list[ProviderResponse | RateLimitError] = [
        *script,
        RateLimitError("429", provider="p", retry_after=0.0),
    ]

    def respond(request: ProviderRequest) -> ProviderResponse:
        answer = answers.pop(0) if answers else text_response("done")
        if isinstance(answer, RateLimitError):
            raise answer
        return answer

    turn = _turn([], store)
    turn.provider = FunctionProvider(respond)
    try:
        await turn.execute(ask("hi", session=SESSION))
        return  # the model's own answer ended the turn before the 429
    except TurnError as exc:
        partial = exc.partial
        if partial is None:
            assert str(exc)  # no tool ran (or the answer was refused), saying why
            return
    _allowed(partial.output)
    # The continuation crosses a wire (a process, Temporal, the store's records) as JSON:
    # what the model sent, carried in its counts, must survive it.
    wire = partial.continuation.model_dump_json()
    continuation = TurnInput.model_validate_json(wire)
    assert continuation.model_dump_json() == wire
    assert carried_counts(continuation.metadata) is not None
    await store.append_history(appended(partial.output))
    # It goes on from there: it may fail on what the model answers next, never because
    # the kept part cannot be continued.
    try:
        output = await turn.execute(continuation)
    except ContinuationError:
        raise
    except TurnError as exc:
        assert str(exc)
        return
    _allowed(output)


@settings(_SETTINGS, max_examples=100)
@given(st.lists(_response(), min_size=1, max_size=3))
def test_any_model_answer_cut_off_by_a_rate_limit_is_kept_and_continued_across_a_wire(
    script: list[ProviderResponse],
) -> None:
    asyncio.run(_cut_off(script))


def _pausing_helper(store: StateStore) -> NeuronTurn:
    """Echoes the task it is given with a call that waits for a person, then says "helped"."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        last = request.messages[-1].content
        if any(isinstance(part, ToolResultPart) for part in last):
            return text_response("helped")
        task = "".join(p.text for p in last if isinstance(p, TextPart))
        return ProviderResponse(
            content=(ToolUsePart("h1", "echo", {"text": task}),),
            stop_reason="tool_use",
            usage=TokenUsage(10, 5),
        )

    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["echo"]))
    return NeuronTurn(
        FunctionProvider(respond), tools=ToolRegistry([echo]), state=store, config=config
    )


async def _decided(script: list[ProviderResponse], store: StateStore) -> None:
    """The conversation with `add` and the helper's calls waiting for a person, who answers
    every pause (approving and denying in turn) until the turn ends."""
    answers = list(script)
    turn = _turn(answers, store, ApprovalPolicy.of(["add"]))
    agents = {"a": turn, "helper": _pausing_helper(store)}
    orchestrator = LocalOrchestrator(agents, store, default_policy=POLICY)
    try:
        output = await orchestrator.dispatch("a", ask("hi", session=SESSION))
        for _ in range(8):  # each pause decides calls of the script's, which is finite
            if output.exit_reason != AWAITING_APPROVAL:
                break
            pending = pending_approvals(output)
            # The store lists what the pause listed, whatever the model named its calls.
            assert await waiting_calls(store, SESSION) == pending
            decisions = [
                Decision.approve(c.id) if n % 2 == 0 else Decision.deny(c.id, "no")
                for n, c in enumerate(pending)
            ]
            output = await orchestrator.dispatch("a", resume_input(SESSION, decisions))
    except DispatchFailed as exc:
        assert isinstance(exc.__cause__, TurnError), exc
        return
    assert output.exit_reason != AWAITING_APPROVAL
    _allowed(output)
    assert await waiting_calls(store, SESSION) == []
    assert await store.read(SessionScope(id=SESSION), STANDING_KEY) is None
    answers.clear()
    follow = await orchestrator.dispatch("a", ask("again", session=SESSION))
    assert follow.exit_reason == "complete"


_IDS = st.sampled_from(["c1", "c2", "d/1", "c1/h1", ""]) | _TEXT


@st.composite
def _asking(draw: st.DrawFn) -> ProviderResponse:
    """An answer that mostly delegates to the helper and calls `add`, whose calls wait."""
    parts: list[TextPart | ToolUsePart] = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        kind = draw(st.sampled_from(["delegate", "delegate", "add", "other"]))
        if kind == "delegate":
            agent = draw(st.sampled_from(["helper", "helper", "other"]) | _TEXT)
            task = {"agent": agent, "message": draw(_TEXT | _SCALAR)}
            parts.append(ToolUsePart(draw(_IDS), "delegate", draw(st.just(task) | _arguments())))
        elif kind == "add":
            sums = st.fixed_dictionaries({"a": st.integers(), "b": st.integers()})
            parts.append(ToolUsePart(draw(_IDS), "add", draw(sums | sums | _arguments())))
        else:
            parts.extend(draw(_response()).content)
    stop = draw(st.sampled_from(["tool_use", "tool_use", "end_turn"]))
    return ProviderResponse(content=tuple(parts), stop_reason=stop, usage=TokenUsage(10, 5))


@settings(_SETTINGS, max_examples=300)
@example(  # a task the helper pauses on, asked twice in one answer, beside a held call
    [
        ProviderResponse(
            content=(
                ToolUsePart("d/1", "delegate", {"agent": "helper", "message": "\ud800"}),
                ToolUsePart("d/2", "delegate", {"agent": "helper", "message": "\ud800"}),
                ToolUsePart("c1", "add", {"a": 1, "b": 2}),
            ),
            stop_reason="tool_use",
            usage=TokenUsage(10, 5),
        )
    ]
)
@given(st.lists(_asking() | _response(), min_size=1, max_size=3))
def test_any_model_answer_pausing_itself_and_its_delegated_agent_is_decided_to_its_end(
    script: list[ProviderResponse],
) -> None:
    asyncio.run(_decided(script, InMemoryStore()))


@pytest.mark.parametrize(
    "usage",
    [
        TokenUsage(input_tokens=1, output_tokens=10**30),
        TokenUsage(input_tokens=-5, output_tokens=1),
        TokenUsage(input_tokens=1, output_tokens=1, cache_read_tokens=2**64),
        TokenUsage(input_tokens=1.5, output_tokens=1),  # type: ignore[arg-type]
    ],
)
async def test_usage_counts_that_are_no_counts_fail_the_call_before_its_tools_run(
    usage: TokenUsage,
) -> None:
    ran: list[str] = []

    @tool
    async def restart(service: str) -> str:
        """Restart a service."""
        ran.append(service)
        return "restarted"

    answer = tool_call_response(ToolUsePart("c1", "restart", {"service": "web"}))
    model = ScriptedProvider([replace(answer, usage=usage)])
    turn = NeuronTurn(model, tools=[restart])

    with pytest.raises(ModelError, match="no count of tokens"):
        await turn.execute(TurnInput(message="restart web", trigger="user"))

    assert ran == []
