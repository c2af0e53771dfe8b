from __future__ import annotations

from neuron_tool._docstring import parse_docstring

DOC = """Search the catalogue.

    Matches titles and authors.

    Args:
        query: Words to look for.
        limit (int): How many results to return,
            at most.
        *tags: Ignored here.

    Returns:
        The matching entries.

    Raises:
        ValueError: Never, really.

    Example:
        search("dune")
    """


def test_description_keeps_prose_and_other_sections_but_drops_args_returns_raises() -> None:
    parsed = parse_docstring(DOC)
    assert parsed.description == (
        'Search the catalogue.\n\nMatches titles and authors.\n\nExample:\n    search("dune")'
    )


def test_args_section_gives_each_parameter_description_with_continuations() -> None:
    parsed = parse_docstring(DOC)
    assert parsed.params == {
        "query": "Words to look for.",
        "limit": "How many results to return, at most.",
        "tags": "Ignored here.",
    }


def test_missing_docstring_gives_empty_description_and_no_params() -> None:
    parsed = parse_docstring(None)
    assert parsed.description == ""
    assert parsed.params == {}


def test_one_line_docstring_is_the_whole_description() -> None:
    assert parse_docstring("Add two numbers.").description == "Add two numbers."
