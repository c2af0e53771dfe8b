"""Output validators: checks of the final answer that send it back to the model with a hint."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import CustomExit, RetryableError
from layer0.testing import InMemoryStore
from neuron_tool import ModelRetry, RunContext
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    OutputValidator,
    OutputValidatorError,
    Tripwire,
    output_guardrail,
    output_validator,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, appended, ask, build, call, calls
from .test_output import last_user_text, stored_messages
from .test_output import typed as typed_turn


class Query(BaseModel):
    """A SQL query to run."""

    sql: str


@output_validator
async def read_only(ctx: RunContext[Any], query: Query) -> Query:
    if not query.sql.lower().startswith("select"):
        raise ModelRetry("only SELECT queries may be run")
    return query


def typed(
    script: list[Any], *validators: OutputValidator, mode: str = "native", **config: Any
) -> tuple[NeuronTurn[Query], ScriptedProvider]:
    """A turn of output type `Query` over `script`, checked by `validators`."""
    return typed_turn(script, Query, mode=mode, output_validators=validators, **config)


DROP = '{"sql": "DROP TABLE users"}'
SELECT = '{"sql": "SELECT * FROM users"}'


async def test_an_answer_a_validator_refuses_goes_back_with_its_hint_and_the_next_is_taken() -> (
    None
):
    turn, provider = typed([answer(DROP), answer(SELECT)], read_only)

    output = await turn.execute(ask("list the users", session="s1"))

    assert output.exit_reason == "complete"
    assert turn.output_value(output) == Query(sql="SELECT * FROM users")
    hint = last_user_text(provider.requests[1])
    assert hint == (
        "Your answer does not match the required output: only SELECT queries may be run. "
        "Reply with only the corrected JSON, nothing else."
    )
    # The session keeps what was refused and why, so the model's next turn knows.
    history = stored_messages(output)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert "DROP TABLE" in str(history[1]) and "only SELECT" in str(history[2])


async def test_a_final_answer_call_a_validator_refuses_is_answered_with_its_hint() -> None:
    script = [
        calls(call("c1", "final_answer", sql="DROP TABLE users")),
        calls(call("c2", "final_answer", sql="SELECT 1")),
    ]
    turn, provider = typed(script, read_only, mode="tool")

    output = await turn.execute(ask())

    assert turn.output_value(output) == Query(sql="SELECT 1")
    (result,) = provider.requests[1].messages[-1].content
    assert result.is_error and result.tool_use_id == "c1"  # type: ignore[union-attr]
    assert "only SELECT queries may be run" in result.content  # type: ignore[union-attr]


async def test_answers_refused_past_the_retries_end_the_turn_output_invalid() -> None:
    turn, provider = typed([answer(DROP), answer(DROP), answer(SELECT)], read_only, retries=1)

    output = await turn.execute(ask())

    assert output.exit_reason == CustomExit(name="output_invalid")
    assert provider.remaining == 1 and output.metadata.turns_used == 2


async def test_validators_run_in_order_each_on_what_the_one_before_returned() -> None:
    seen: list[str] = []

    @output_validator
    async def trimmed(ctx: RunContext[Any], query: Query) -> Query:
        seen.append(query.sql)
        return Query(sql=query.sql.strip())

    @output_validator
    async def limited(ctx: RunContext[Any], query: Query) -> Query:
        seen.append(query.sql)
        return Query(sql=f"{query.sql} LIMIT 10")

    turn, _ = typed([answer('{"sql": "  SELECT 1  "}')], trimmed, read_only, limited)

    output = await turn.execute(ask())

    assert seen == ["  SELECT 1  ", "SELECT 1"]
    assert turn.output_value(output) == Query(sql="SELECT 1 LIMIT 10")


async def test_a_validator_reads_the_callers_dependencies() -> None:
    @output_validator
    async def allowed_tables(ctx: RunContext[set[str]], query: Query) -> Query:
        table = query.sql.split()[-1]
        if table not in ctx.deps:
            raise ModelRetry(f"no table {table!r}; there are {sorted(ctx.deps)}")
        return query

    turn, provider = typed(
        [answer('{"sql": "SELECT * FROM secrets"}'), answer(SELECT)], allowed_tables
    )

    output = await turn.execute(ask(), deps={"users"})

    assert turn.output_value(output).sql == "SELECT * FROM users"
    assert "no table 'secrets'; there are ['users']" in last_user_text(provider.requests[1])


async def test_a_text_turns_validator_sends_its_answer_back_or_changes_its_text() -> None:
    @output_validator
    async def cites(ctx: RunContext[Any], text: str) -> str:
        if "[1]" not in text:
            raise ModelRetry("cite a source as [1]")
        return text.replace("[1]", "[1: the manual]")

    config = NeuronTurnConfig(model="m", output_validators=[cites])
    turn, provider = build([answer("It is 42."), answer("It is 42 [1].")], config=config)

    output = await turn.execute(ask(session="s1"))

    assert output.exit_reason == "complete"
    assert output.message.as_text() == "It is 42 [1: the manual]."
    assert last_user_text(provider.requests[1]) == (
        "Your answer was not accepted: cite a source as [1]. Answer again."
    )
    # The session keeps the model's own words.
    assert "It is 42 [1]." in str(stored_messages(output)[-1])


async def test_output_guardrails_check_what_the_validators_returned() -> None:
    checked: list[Query] = []

    @output_validator
    async def limited(ctx: RunContext[Any], query: Query) -> Query:
        return Query(sql=f"{query.sql} LIMIT 10")

    @output_guardrail
    async def watch(ctx: RunContext[Any], query: Query) -> Tripwire | None:
        checked.append(query)
        return None

    turn, _ = typed([answer(SELECT)], limited, guardrails=[watch])
    await turn.execute(ask())
    assert checked == [Query(sql="SELECT * FROM users LIMIT 10")]


@pytest.mark.parametrize(
    ("returned", "named"),
    [
        (None, "returned what is not Query"),
        ({"sql": 3}, "returned what is not Query"),
    ],
)
async def test_a_validator_returning_what_is_not_the_output_type_fails_the_turn_naming_it(
    returned: object, named: str
) -> None:
    @output_validator
    async def careless(ctx: RunContext[Any], query: Query) -> Any:
        return returned

    turn, _ = typed([answer(SELECT)], careless)
    with pytest.raises(OutputValidatorError, match="output validator 'careless' ") as raised:
        await turn.execute(ask())
    assert named in str(raised.value)


async def test_a_validator_that_raises_fails_the_turn_rather_than_let_the_answer_through() -> None:
    @output_validator
    async def broken(ctx: RunContext[Any], query: Query) -> Query:
        raise KeyError("schema")

    turn, _ = typed([answer(SELECT)], broken)
    with pytest.raises(OutputValidatorError, match="output validator 'broken' failed: KeyError"):
        await turn.execute(ask())


async def test_a_validators_own_turn_error_is_raised_as_it_is() -> None:
    @output_validator
    async def rate_limited(ctx: RunContext[Any], query: Query) -> Query:
        raise RetryableError("the checking model is rate limited", retry_after=3.0)

    turn, _ = typed([answer(SELECT)], rate_limited)
    with pytest.raises(RetryableError, match="rate limited"):
        await turn.execute(ask())


async def test_a_text_turns_validator_returning_other_than_text_fails_the_turn() -> None:
    @output_validator
    async def counted(ctx: RunContext[Any], text: str) -> Any:
        return len(text)

    turn, _ = build([answer("hi")], config=NeuronTurnConfig(model="m", output_validators=[counted]))
    with pytest.raises(OutputValidatorError, match="returned int; on a text turn"):
        await turn.execute(ask())


def test_a_validator_that_is_not_async_is_refused_when_made() -> None:
    def sync(ctx: RunContext[Any], query: Query) -> Query:
        return query

    with pytest.raises(TypeError, match="an output validator must be an async function"):
        output_validator(sync)  # type: ignore[arg-type]


def test_a_validator_is_named_for_its_function_or_as_given() -> None:
    assert read_only.name == "read_only"

    @output_validator(name="policy")
    async def check(ctx: RunContext[Any], query: Query) -> Query:
        return query

    assert check.name == "policy"


async def test_a_validator_rate_limited_after_a_tool_ran_hands_on_a_part_that_asks_again() -> None:
    store = InMemoryStore()
    limited = [True]

    @output_validator
    async def checked_elsewhere(ctx: RunContext[Any], text: str) -> str:
        if limited.pop() if limited else False:
            raise RetryableError("the checking service is rate limited", retry_after=1.0)
        return text

    config = NeuronTurnConfig(model="m", output_validators=[checked_elsewhere])
    script = [calls(call("c1", "add", a=2, b=3)), answer("5, unchecked"), answer("5")]
    turn, provider = build(script, state=store, config=config)

    with pytest.raises(RetryableError) as raised:
        await turn.execute(ask(session="s1"))
    partial = raised.value.partial
    assert partial is not None
    # The part keeps the tool's result, not the answer that was never checked.
    kept = appended(partial.output).messages
    assert [m["role"] for m in kept] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    await store.append_history(appended(partial.output))

    output = await turn.execute(partial.continuation)

    assert output.exit_reason == "complete" and output.message.as_text() == "5"
    assert len(provider.requests) == 3
