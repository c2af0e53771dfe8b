"""The SQL of every store operation, composed once for the store's schema."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final, LiteralString

from psycopg import sql

__all__ = ["Statements"]

# `{s}` is the schema and `{words}` its text search configuration, both quoted.
_TEMPLATES: Final[dict[str, LiteralString]] = {
    "upsert": """
        INSERT INTO {s}.entries (scope, key, value, body, document)
        VALUES (%s, %s, %s, %s, to_tsvector({words}, %s))
        ON CONFLICT (scope, key) DO UPDATE
        SET value = excluded.value, body = excluded.body, document = excluded.document
    """,
    "delete": "DELETE FROM {s}.entries WHERE scope = %s AND key = %s",
    "delete_appended": "DELETE FROM {s}.appended WHERE scope = %s AND key = %s",
    # The value and every append to it, in one statement and so one snapshot.
    "read": """
        SELECT e.value, ARRAY(SELECT a.items FROM {s}.appended AS a
                              WHERE a.scope = e.scope AND a.key = e.key ORDER BY a.id)
        FROM {s}.entries AS e WHERE e.scope = %s AND e.key = %s
    """,
    # The row lock every append to the key takes first, creating the list it grows
    # when it is missing: appends to one key queue here, across connections,
    # processes and machines. A conflict locks the row even though `WHERE false`
    # updates nothing; unlike an insert then a SELECT ... FOR UPDATE, a concurrent
    # delete cannot slip between the two.
    "lock_for_append": """
        INSERT INTO {s}.entries AS e (scope, key, value, body, document)
        VALUES (%s, %s, '[]', '', ''::tsvector)
        ON CONFLICT (scope, key) DO UPDATE SET value = e.value WHERE false
    """,
    # unnest keeps the array's (sorted) order, so every batch locks in one order.
    "lock_keys": "SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k",
    # An append, once the key's row is locked (a statement of its own, so that its
    # snapshot sees every append committed before the lock was granted). Answers
    # the list's length before, whether `id` was appended already, and the length
    # after, NULL when nothing was appended: appended already, the value is not a
    # list (the length before is NULL too), or the length is not the expected one.
    "append": """
        WITH found AS (
            SELECT
                (SELECT a.length FROM {s}.appended AS a
                 WHERE a.scope = e.scope AND a.key = e.key ORDER BY a.id DESC LIMIT 1) AS last,
                EXISTS (SELECT 1 FROM {s}.appended AS a
                        WHERE a.scope = e.scope AND a.key = e.key AND a.append_id = %(id)s) AS has,
                e.value
            FROM {s}.entries AS e WHERE e.scope = %(scope)s AND e.key = %(key)s
        ), counted AS (
            SELECT has, CASE
                WHEN last IS NOT NULL THEN last
                WHEN json_typeof(value::json) = 'array' THEN json_array_length(value::json)
            END AS length
            FROM found
        ), added AS (
            INSERT INTO {s}.appended (scope, key, append_id, items, length)
            SELECT %(scope)s, %(key)s, %(id)s, %(items)s, length + %(count)s FROM counted
            WHERE NOT has AND length IS NOT NULL
                AND (%(expected)s::bigint IS NULL OR length = %(expected)s::bigint)
            RETURNING length
        )
        SELECT length, has, (SELECT length FROM added) FROM counted
    """,
    "keys": """
        SELECT key FROM {s}.entries
        WHERE scope = %(scope)s AND key >= %(prefix)s
            AND (%(end)s::text IS NULL OR key < %(end)s::text)
            AND starts_with(key, %(prefix)s)
        ORDER BY key
    """,
    # Each word alone, through plainto_tsquery (which no text can make fail),
    # any of them matching; the snippets are made for the rows kept only.
    "search": """
        WITH query AS (
            SELECT string_agg('(' || q::text || ')', ' | ')::tsquery AS q
            FROM unnest(%(words)s::text[]) AS w, plainto_tsquery({words}, w) AS q
            WHERE q::text <> ''
        ), best AS (
            SELECT e.key, ts_rank(e.document, query.q) AS score, e.body, query.q
            FROM {s}.entries AS e, query
            WHERE e.scope = %(scope)s AND e.document @@ query.q
            ORDER BY score DESC, e.key LIMIT %(limit)s
        )
        SELECT key, score, ts_headline({words}, body, q,
            'StartSel=**, StopSel=**, MaxWords=16, MinWords=6, ShortWord=2, MaxFragments=1')
        FROM best ORDER BY score DESC, key
    """,
    "put_turn": """
        INSERT INTO {s}.turns (turn_id, session, started, summary, record)
        VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (turn_id) DO UPDATE SET session = excluded.session,
            started = excluded.started, summary = excluded.summary, record = excluded.record
    """,
    "read_turn": "SELECT record FROM {s}.turns WHERE turn_id = %s",
    # Forgetting sessions: each statement answers how many entries it deleted. The
    # search index is a column of `entries`, so it goes with the rows.
    "forget_scopes": """
        WITH gone AS (DELETE FROM {s}.entries WHERE scope = ANY(%s::text[]) RETURNING 1)
        SELECT count(*) FROM gone
    """,
    "forget_scopes_appended": "DELETE FROM {s}.appended WHERE scope = ANY(%s::text[])",
    "forget_turns": """
        WITH gone AS (DELETE FROM {s}.turns WHERE session = ANY(%s::text[]) RETURNING 1)
        SELECT count(*) FROM gone
    """,
    # By id, but only a record kept without a session: no id can reach a session's.
    "forget_sessionless_turns": """
        WITH gone AS (
            DELETE FROM {s}.turns WHERE turn_id = ANY(%s::text[]) AND session IS NULL
            RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    "forget_keys": """
        WITH gone AS (
            DELETE FROM {s}.entries AS e USING unnest(%(scopes)s::text[], %(keys)s::text[])
                AS k (scope, key)
            WHERE e.scope = k.scope AND e.key = k.key RETURNING 1
        ), appended AS (
            DELETE FROM {s}.appended AS a USING unnest(%(scopes)s::text[], %(keys)s::text[])
                AS k (scope, key)
            WHERE a.scope = k.scope AND a.key = k.key
        )
        SELECT count(*) FROM gone
    """,
    "summaries": "SELECT summary FROM {s}.turns ORDER BY started DESC, turn_id LIMIT %s",
    "session_summaries": """
        SELECT summary FROM {s}.turns WHERE session IS NOT DISTINCT FROM %s
        ORDER BY started DESC, turn_id LIMIT %s
    """,
    # The first turn's summary gives the title; turns without a session form one group.
    "sessions": """
        SELECT t.session, count(*), min(t.started), max(t.started),
            (SELECT f.summary FROM {s}.turns AS f
             WHERE f.session IS NOT DISTINCT FROM t.session ORDER BY f.started LIMIT 1)
        FROM {s}.turns AS t GROUP BY t.session ORDER BY max(t.started) DESC LIMIT %s
    """,
}


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the store, for one schema."""

    upsert: sql.Composed
    delete: sql.Composed
    delete_appended: sql.Composed
    read: sql.Composed
    lock_for_append: sql.Composed
    append: sql.Composed
    lock_keys: sql.Composed
    keys: sql.Composed
    search: sql.Composed
    put_turn: sql.Composed
    read_turn: sql.Composed
    forget_scopes: sql.Composed
    forget_scopes_appended: sql.Composed
    forget_turns: sql.Composed
    forget_sessionless_turns: sql.Composed
    forget_keys: sql.Composed
    summaries: sql.Composed
    session_summaries: sql.Composed
    sessions: sql.Composed

    @classmethod
    def of(cls, schema: str) -> Statements:
        """Compose every statement for `schema`."""
        words = sql.Literal(sql.Identifier(schema, "words").as_string())
        parts = {"s": sql.Identifier(schema), "words": sql.SQL("{}::regconfig").format(words)}
        return cls(
            **{field.name: sql.SQL(_TEMPLATES[field.name]).format(**parts) for field in fields(cls)}
        )
