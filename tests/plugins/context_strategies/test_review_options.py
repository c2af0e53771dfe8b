"""A strategy option of the wrong type is refused when the strategy is built, naming it."""

from __future__ import annotations

import pytest
from neuron_context_strategies import StrategyOptionError

from neuron_turn import PluginFactoryError, get_context_strategy


@pytest.mark.parametrize(
    ("name", "option", "value", "says"),
    [
        ("clear_tool_results", "keep", 2.5, "keep must be a whole number; got 2.5"),
        ("clear_tool_results", "keep", "five", "keep must be a whole number; got 'five'"),
        ("tiered", "keep", True, "keep must be a whole number; got True"),
        ("tiered", "min_chars", None, "min_chars must be a whole number; got None"),
        ("summarize", "max_summary_tokens", 2.5, "max_summary_tokens must be a whole number"),
        ("summarize", "max_summary_tokens", "1k", "max_summary_tokens must be a whole number"),
        ("summarize", "keep_recent", "half", "keep_recent must be between 0 and 1; got 'half'"),
        ("summarize", "keep_recent", True, "keep_recent must be between 0 and 1; got True"),
        ("summarize", "model", 5, "model must be a model's name; got 5"),
        ("summarize", "model", "", "model must be a model's name; got ''"),
        ("tiered", "provider_options", "x", "provider_options must be a mapping"),
    ],
)
def test_an_option_of_the_wrong_type_is_refused_when_built(
    name: str, option: str, value: object, says: str
) -> None:
    with pytest.raises(PluginFactoryError, match="failed to build") as raised:
        get_context_strategy(name, **{option: value})
    cause = raised.value.__cause__
    assert isinstance(cause, StrategyOptionError)
    assert says in str(cause)
    assert says in str(raised.value)
