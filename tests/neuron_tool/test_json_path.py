from __future__ import annotations

from neuron_tool._json_path import json_path


def test_keys_and_indexes_render_as_dotted_path_with_brackets() -> None:
    assert json_path(["items", 2, "name"]) == "$.items[2].name"


def test_empty_location_is_the_root() -> None:
    assert json_path([]) == "$"


def test_keys_that_are_not_identifiers_are_quoted_and_escaped() -> None:
    assert json_path(["a b", "it's"]) == "$['a b']['it\\'s']"
