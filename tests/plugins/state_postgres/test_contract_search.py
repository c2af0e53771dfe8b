"""Search on every store: ranked best first, stemmed, with snippets, any query text safe."""

from __future__ import annotations

import random

import pytest

from layer0 import SearchResult, SessionScope

from .conftest import AnyStore

SESSION = SessionScope(id="s1")


async def test_a_value_mentioning_the_word_more_often_ranks_higher(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "once", "the harbour is quiet today, apart from one boat")
    await any_store.write(SESSION, "thrice", "boat after boat after boat, all day long")
    await any_store.write(SESSION, "none", "nothing to see here at all")
    results = await any_store.search(SESSION, "boat", 10)
    assert [result.key for result in results] == ["thrice", "once"]
    assert results[0].score > results[1].score > 0
    assert all(isinstance(result, SearchResult) for result in results)


async def test_a_value_matching_more_of_the_words_ranks_higher(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "one", "red wine")
    await any_store.write(SESSION, "both", "red wine from the cellar")
    await any_store.write(SESSION, "other", "white bread")
    results = await any_store.search(SESSION, "cellar wine", 10)
    assert [result.key for result in results] == ["both", "one"]


async def test_snippets_show_the_match_highlighted(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "The user's favourite colour is teal.")
    [result] = await any_store.search(SESSION, "colour", 5)
    assert result.key == "k"
    assert result.snippet is not None
    assert "**colour**" in result.snippet


async def test_words_are_stemmed_and_case_folded(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "She prefers Colours that are calm")
    assert [r.key for r in await any_store.search(SESSION, "colour PREFERRED", 5)] == ["k"]


async def test_the_strings_inside_structured_values_are_searchable(any_store: AnyStore) -> None:
    await any_store.write(
        SESSION,
        "messages",
        [{"role": "user", "content": [{"type": "text", "text": "book a table in Lisbon"}]}],
    )
    await any_store.write(SESSION, "count", {"lisbon_visits": 3})
    results = await any_store.search(SESSION, "lisbon", 5)
    assert [result.key for result in results] == ["messages"]


async def test_keys_are_searchable_too(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "travel/lisbon", 3)
    assert [r.key for r in await any_store.search(SESSION, "lisbon", 5)] == ["travel/lisbon"]


async def test_search_returns_at_most_limit_results(any_store: AnyStore) -> None:
    for index in range(20):
        await any_store.write(SESSION, f"k{index:02}", "apple " * (index + 1))
    results = await any_store.search(SESSION, "apple", 5)
    assert len(results) == 5
    assert [result.key for result in results] == ["k19", "k18", "k17", "k16", "k15"]
    assert await any_store.search(SESSION, "apple", 0) == []
    assert len(await any_store.search(SESSION, "apple", 10**30)) == 20
    assert await any_store.search(SESSION, "apple", -1) == []


async def test_search_stays_within_its_scope(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "mine", "shared word")
    await any_store.write(SessionScope(id="other"), "theirs", "shared word")
    await any_store.write("global", "global", "shared word")
    assert [r.key for r in await any_store.search(SESSION, "shared", 10)] == ["mine"]


async def test_search_follows_replacements_and_deletes(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "old words")
    await any_store.write(SESSION, "k", "new words")
    assert await any_store.search(SESSION, "old", 5) == []
    assert [r.key for r in await any_store.search(SESSION, "new", 5)] == ["k"]
    await any_store.delete(SESSION, "k")
    assert await any_store.search(SESSION, "new", 5) == []


@pytest.mark.parametrize(
    "query",
    [
        "foo:bar AND (",
        '"',
        '"unbalanced',
        "*",
        "foo*",
        "NEAR(a b, 2)",
        "-x",
        "^start",
        "key:value",
        "body:",
        "AND",
        "OR NOT",
        "(",
        ")",
        "{a b}",
        "a + b",
        "\x00",
        "a\x00b",
        "''",
        "\\",
        "; DROP TABLE entries; --",
    ],
)
async def test_fts_syntax_in_the_query_is_plain_text_and_never_raises(
    any_store: AnyStore, query: str
) -> None:
    await any_store.write(SESSION, "k", "foo bar and key value start near")
    results = await any_store.search(SESSION, query, 5)
    assert all(result.key == "k" for result in results)


async def test_operator_words_match_as_ordinary_words(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "salt and pepper")
    await any_store.write(SESSION, "other", "salt")
    assert [r.key for r in await any_store.search(SESSION, "AND", 5)] == ["k"]
    assert [r.key for r in await any_store.search(SESSION, "foo:bar AND (", 5)] == ["k"]


async def test_random_punctuation_queries_never_raise(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "some text to match")
    alphabet = "abc :*\"()^-+{}[],.;'\\/\x00\t\nNEARANDORNOT"
    rng = random.Random(1234)
    for _ in range(300):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        await any_store.search(SESSION, query, 3)


async def test_an_empty_query_finds_nothing(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "text")
    assert await any_store.search(SESSION, "", 5) == []
    assert await any_store.search(SESSION, "   \n\t", 5) == []


async def test_a_value_without_strings_has_no_snippet_but_its_key_matches(
    any_store: AnyStore,
) -> None:
    await any_store.write(SESSION, "numbers", [1, 2, 3])
    [result] = await any_store.search(SESSION, "numbers", 5)
    assert result.key == "numbers"
    assert result.snippet is None


async def test_a_query_of_lone_surrogates_and_control_characters_never_raises(
    any_store: AnyStore,
) -> None:
    await any_store.write(SESSION, "k", "plain text")
    assert await any_store.search(SESSION, "\ud800 \udfff\x01\x7f", 5) == []
    assert [r.key for r in await any_store.search(SESSION, "\ud800text", 5)] == ["k"]


async def test_words_in_paths_and_urls_are_found_alone(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "see https://example.com/lisbon/tram and ~/notes/porto.txt")
    assert [r.key for r in await any_store.search(SESSION, "lisbon", 5)] == ["k"]
    assert [r.key for r in await any_store.search(SESSION, "porto", 5)] == ["k"]
