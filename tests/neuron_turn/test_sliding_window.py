from __future__ import annotations

from collections.abc import Sequence

import pytest

from layer0 import UrlSource
from neuron_turn.loop.context import ContextStrategy
from neuron_turn.loop.exchanges import OMITTED_NOTE
from neuron_turn.loop.provider import (
    ImagePart,
    ProviderMessage,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.sliding_window import (
    IMAGE_TOKENS,
    NoCompaction,
    SlidingWindow,
    estimate_tokens,
)
from neuron_turn.plugins import PluginManager


def system(text: str = "be brief") -> ProviderMessage:
    return ProviderMessage("system", [TextPart(text)])


def user(text: str) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(text)])


def assistant(text: str) -> ProviderMessage:
    return ProviderMessage("assistant", [TextPart(text)])


def call(id: str) -> ProviderMessage:
    return ProviderMessage("assistant", [ToolUsePart(id=id, name="add", input={"a": 1})])


def result(id: str) -> ProviderMessage:
    return ProviderMessage("user", [ToolResultPart(tool_use_id=id, content="2")])


def texts(messages: Sequence[ProviderMessage]) -> list[str]:
    out = []
    for message in messages:
        part = message.content[0]
        if isinstance(part, TextPart):
            out.append(part.text)
        elif isinstance(part, ToolUsePart):
            out.append(f"call:{part.id}")
        elif isinstance(part, ToolResultPart):
            out.append(f"result:{part.tool_use_id}")
    return out


def assert_no_orphans(messages: Sequence[ProviderMessage]) -> None:
    calls = {p.id for m in messages for p in m.content if isinstance(p, ToolUsePart)}
    results = {p.tool_use_id for m in messages for p in m.content if isinstance(p, ToolResultPart)}
    assert results <= calls, f"orphaned tool results: {results - calls}"
    non_system = [m for m in messages if m.role != "system"]
    if non_system:
        assert not any(isinstance(p, ToolResultPart) for p in non_system[0].content)


def test_both_satisfy_the_context_strategy_protocol() -> None:
    assert isinstance(SlidingWindow(), ContextStrategy)
    assert isinstance(NoCompaction(), ContextStrategy)


def test_the_builtin_plugin_registers_both_by_name() -> None:
    manager = PluginManager()
    window = manager.get_context_strategy("sliding_window", max_messages=3)
    assert isinstance(window, SlidingWindow)
    assert window.max_messages == 3
    assert isinstance(manager.get_context_strategy("none"), NoCompaction)


def test_token_estimate_is_chars_over_four_rounded_up() -> None:
    assert estimate_tokens([user("abcd")]) == 1
    assert estimate_tokens([user("abcde")]) == 2
    assert estimate_tokens([]) == 0
    # Tool calls count their name and JSON input; results their content.
    assert estimate_tokens([call("c1")]) == -(-(len("add") + len('{"a": 1}')) // 4)
    assert estimate_tokens([result("c1")]) == 1


def test_token_estimate_counts_images_as_a_fixed_size() -> None:
    image = ProviderMessage("user", [ImagePart(UrlSource(url="https://x/y.png"), "image/png")])
    assert estimate_tokens([image]) == IMAGE_TOKENS


async def test_keeps_system_messages_and_the_last_n() -> None:
    messages = [system(), *(user(f"u{i}") for i in range(6))]
    kept = await SlidingWindow(max_messages=3).compact(messages)
    assert texts(kept) == ["be brief", "u3", "u4", "u5"]


async def test_short_conversations_are_unchanged() -> None:
    messages = [system(), user("hi"), assistant("hello")]
    assert await SlidingWindow(max_messages=5).compact(messages) == messages


async def test_system_messages_keep_their_place() -> None:
    messages = [user("old"), system("rules"), user("a"), assistant("b")]
    kept = await SlidingWindow(max_messages=2).compact(messages)
    assert texts(kept) == ["rules", "a", "b"]


async def test_a_window_starting_at_a_tool_result_drops_it_with_its_call() -> None:
    messages = [system(), user("q"), call("c1"), result("c1"), assistant("done"), user("next")]
    # The last 3 would start at result:c1, orphaning it; the pair goes together.
    # The window opens with the assistant, so a note from the user goes first.
    kept = await SlidingWindow(max_messages=3).compact(messages)
    assert texts(kept) == ["be brief", OMITTED_NOTE, "done", "next"]
    assert_no_orphans(kept)


async def test_a_window_starting_at_the_call_keeps_the_pair() -> None:
    messages = [system(), user("q"), call("c1"), result("c1"), assistant("done")]
    kept = await SlidingWindow(max_messages=3).compact(messages)
    assert texts(kept) == ["be brief", OMITTED_NOTE, "call:c1", "result:c1", "done"]


async def test_when_only_a_tool_result_would_remain_its_call_comes_in() -> None:
    messages = [system(), user("q"), call("c1"), result("c1")]
    kept = await SlidingWindow(max_messages=1).compact(messages)
    assert texts(kept) == ["be brief", OMITTED_NOTE, "call:c1", "result:c1"]
    assert_no_orphans(kept)


@pytest.mark.parametrize("max_messages", range(1, 12))
async def test_no_window_ever_orphans_a_tool_result(max_messages: int) -> None:
    messages = [system(), user("q")]
    for i in range(4):
        messages += [call(f"c{i}"), result(f"c{i}")]
    messages += [assistant("done")]
    kept = await SlidingWindow(max_messages=max_messages).compact(messages)
    assert_no_orphans(kept)
    assert kept[0].role == "system"
    assert kept[-1] == messages[-1]
    others = [m for m in kept if m.role != "system" and texts([m]) != [OMITTED_NOTE]]
    assert len(others) <= max(max_messages, 2)


async def test_max_tokens_trims_further_but_keeps_the_newest_message() -> None:
    messages = [system("s"), user("x" * 400), user("y" * 400), user("z" * 400)]
    kept = await SlidingWindow(max_messages=10, max_tokens=150).compact(messages)
    assert texts(kept) == ["s", "z" * 400]
    tiny = await SlidingWindow(max_messages=10, max_tokens=1).compact(messages)
    assert texts(tiny) == ["s", "z" * 400]


def test_should_compact_on_count_or_tokens() -> None:
    window = SlidingWindow(max_messages=2)
    two = [system(), user("a"), assistant("b")]
    assert not window.should_compact(two, limit=1_000)
    assert window.should_compact([*two, user("c")], limit=1_000)
    assert window.should_compact([user("x" * 400)], limit=99)
    assert not window.should_compact([user("x" * 400)], limit=100)
    assert SlidingWindow(max_tokens=10).should_compact([user("x" * 44)], limit=1_000)


def test_none_never_compacts() -> None:
    strategy = NoCompaction()
    messages = [user("x" * 10_000)] * 500
    assert not strategy.should_compact(messages, limit=1)
    assert strategy.token_estimate(messages) == estimate_tokens(messages)


async def test_none_returns_the_messages_unchanged() -> None:
    messages = [system(), call("c1"), result("c1")]
    assert await NoCompaction().compact(messages) == messages


@pytest.mark.parametrize("options", [{"max_messages": 0}, {"max_tokens": 0}])
def test_bad_options_are_refused(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SlidingWindow(**options)


async def test_a_newest_tool_result_larger_than_the_limit_is_cleared_its_call_and_task_kept() -> (
    None
):
    huge = ProviderMessage("user", [ToolResultPart(tool_use_id="c1", content="x" * 400_000)])
    messages = [system(), user("read the log"), call("c1"), huge]

    kept = await SlidingWindow(max_tokens=1_000).compact(messages)

    assert texts(kept) == ["be brief", "read the log", "call:c1", "result:c1"]
    (part,) = kept[-1].content
    assert isinstance(part, ToolResultPart)
    assert part.content == "[tool result cleared to save context: 400000 characters]"
    assert estimate_tokens(kept) <= 1_000


async def test_a_newest_result_within_the_limit_is_kept_whole() -> None:
    messages = [system(), user("old " * 400), assistant("ok"), call("c1"), result("c1")]

    kept = await SlidingWindow(max_tokens=50).compact(messages)

    assert kept[-1].content == result("c1").content
    assert "old" not in str(kept)
