"""Effect-tool calls a hostile model makes that a store or an orchestrator would refuse.

Each is answered as a tool error the model reads, with nothing declared, so
that no store refusing it later fails the turn's memory effects, and with them
the turn's own history.
"""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import CustomEffect, HandoffEffect

from .support import TRUSTING, answer, ask, build, call, calls

# A key with NUL: PostgresStore refuses it. A key or scope this long: PostgresStore
# indexes scope and key together and refuses an entry past about 2.7 kB.
EMOJI = "\U0001f600"
UNSTORABLE: list[tuple[str, dict[str, JsonValue], str]] = [
    ("write_memory", {"key": "a\x00b", "value": 1}, "NUL"),
    ("delete_memory", {"key": "a\x00b"}, "NUL"),
    ("write_memory", {"key": "k" * 513, "value": 1}, "512 bytes"),
    ("write_memory", {"key": EMOJI * 200, "value": 1}, "512 bytes"),
    ("delete_memory", {"key": "k" * 3000}, "512 bytes"),
    ("write_memory", {"scope": "custom:" + EMOJI * 512, "key": "k", "value": 1}, "512 bytes"),
    ("write_memory", {"scope": "custom:a\x01b", "key": "k", "value": 1}, "control"),
    ("delete_memory", {"scope": "session:" + "s" * 600, "key": "k"}, "512 bytes"),
]


@pytest.mark.parametrize(("name", "arguments", "why"), UNSTORABLE)
async def test_a_memory_key_or_scope_no_store_can_keep_is_refused_and_nothing_declared(
    name: str, arguments: dict[str, JsonValue], why: str
) -> None:
    turn, provider = build([calls(call("c1", name, **arguments)), answer("ok")], config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert [effect.type for effect in output.effects] == ["custom"]  # its history only
    result = provider.requests[1].messages[-1].content[0]
    assert result.is_error is True  # type: ignore[union-attr]
    assert name in result.content and why in result.content  # type: ignore[union-attr]


async def test_a_memory_key_and_scope_at_the_bounds_are_declared() -> None:
    script = [
        calls(
            call("c1", "write_memory", scope="custom:" + "s" * 505, key="k" * 512, value=1),
            call("c2", "write_memory", key=EMOJI * 128, value=2),
        ),
        answer("ok"),
    ]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert [effect.type for effect in output.effects] == ["write_memory", "write_memory", "custom"]


async def test_a_second_handoff_in_one_answer_is_refused_and_the_first_is_kept() -> None:
    script = [
        calls(
            call("c1", "handoff", agent="closer", state=None),
            call("c2", "handoff", agent="other", state=None),
        ),
    ]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert output.effects[:-1] == [HandoffEffect(agent="closer", state=None)]
    assert isinstance(output.effects[-1], CustomEffect)
    history = output.effects[-1].data["messages"]  # type: ignore[index,call-overload]
    (first, second) = history[-1]["content"]  # type: ignore[index,call-overload]
    assert first["is_error"] is False
    assert second["is_error"] is True and "'closer'" in second["content"]
