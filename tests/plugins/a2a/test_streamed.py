"""`StreamedText`: the answer's text passed on as a remote streams it, each piece once."""

from __future__ import annotations

from neuron_a2a._streamed import StreamedText


def passed(*steps: tuple[str, str]) -> list[str]:
    out: list[str] = []
    text = StreamedText(out.append)
    for how, said in steps:
        (text.extend if how == "+" else text.replace)(said)
    return out


def test_appends_pass_on_and_the_whole_answer_at_the_end_adds_nothing() -> None:
    assert passed(("=", "Hel"), ("+", "lo"), ("+", "!"), ("=", "Hello!")) == ["Hel", "lo", "!"]


def test_a_next_call_starting_like_the_last_passes_on_only_once_it_differs() -> None:
    steps = [("=", "I'll check."), ("=", "I"), ("+", "'ll"), ("+", " say: yes")]
    assert passed(*steps) == ["I'll check.", "I'll say: yes"]


def test_a_next_call_extending_the_last_passes_on_only_the_rest() -> None:
    assert passed(("=", "Hi"), ("=", "H"), ("+", "i"), ("+", " there")) == ["Hi", " there"]


def test_a_fresh_start_is_passed_on_whole() -> None:
    assert passed(("=", "abc"), ("+", "d"), ("=", "xyz"), ("+", "!")) == ["abc", "d", "xyz", "!"]
