from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

import layer0
from layer0 import Continue, HookContext, HookPoint, ModifyToolInput, usd
from neuron_hooks import (
    DEFAULT_SECRET_PATTERNS,
    HookConfigError,
    HookRegistry,
    RedactionHook,
    redact,
)

# Fake secrets, assembled from parts so that secret scanners do not flag this file.
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
OPENAI_KEY = "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
ANTHROPIC_KEY = "sk-" + "ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1H-g0fedcba_AA"
GITHUB_TOKEN = "ghp" + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuv"
JWT = ".".join(
    [
        "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)
PEM_BODY = "MIIEowIBAAKCAQEA7bq9\nc2VjcmV0IGtleSBtYXRlcmlhbA==\n"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----"

R = "[REDACTED]"

# Fragments that put the patterns' edges (prefixes, separators, key words) in play.
_SECRET_PARTS = [
    "AKIA",
    "IOSFODNN7EXAMPLE",
    "sk-",
    "ant-",
    "ghp_",
    "eyJ",
    ".",
    "Bearer",
    "password",
    "DB_",
    "api_key",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "a1B2c3D4e5F6g7H8i9J0",
]


def _ctx(tool_input: JsonValue, point: HookPoint = HookPoint.PRE_TOOL_USE) -> HookContext:
    base: dict[str, Any] = {"tokens_used": 0, "cost": usd("0"), "turns_completed": 0, "elapsed": 0}
    return HookContext(point=point, tool_name="http", tool_input=tool_input, **base)


def test_redaction_hook_is_a_layer0_hook() -> None:
    assert isinstance(RedactionHook(), layer0.Hook)


def test_redaction_hook_listens_at_pre_tool_use_only() -> None:
    assert RedactionHook().points == {HookPoint.PRE_TOOL_USE}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {AWS_KEY} here", f"key {R} here"),
        (f"OPENAI={OPENAI_KEY}", f"OPENAI={R}"),
        (f"use {ANTHROPIC_KEY}.", f"use {R}."),
        (f"token {GITHUB_TOKEN}", f"token {R}"),
        (f"pat {GITHUB_PAT}", f"pat {R}"),
        (f"jwt={JWT};", f"jwt={R};"),
        (f"Authorization: Bearer {OPENAI_KEY[3:]}", f"Authorization: Bearer {R}"),
        ("curl -H 'authorization: bearer abc.def-ghi'", f"curl -H 'authorization: bearer {R}'"),
        (f"before\n{PEM}\nafter", f"before\n{R}\nafter"),
        ("password=hunter2 user=bob", f"password={R} user=bob"),
        ("DB_PASSWORD: 'correct horse'", f"DB_PASSWORD: {R}"),
        ('{"client_secret": "s3cr3t", "id": 7}', f'{{"client_secret": {R}, "id": 7}}'),
        ("export OPENAI_API_KEY=abc123", f"export OPENAI_API_KEY={R}"),
        ("url?access_token=xyz&page=2", f"url?access_token={R}&page=2"),
    ],
    ids=[
        "aws",
        "openai",
        "anthropic",
        "github",
        "github-pat",
        "jwt",
        "bearer",
        "bearer-lower",
        "pem",
        "password",
        "env-password",
        "json-text",
        "api-key",
        "query",
    ],
)
def test_default_patterns_redact_each_kind_of_secret(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_pem_block_cut_off_before_its_end_line_is_redacted_to_the_end() -> None:
    truncated = "key:\n-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXk"

    assert redact(truncated) == f"key:\n{R}"


@pytest.mark.parametrize(
    "text",
    [
        "ask-me-anything about the task-manager and risk-assessment tools",
        "max_tokens=100 tokens_used: 5 passes=3",
        "compile with -O2; the password_hash column is indexed",
        "AKIA is a prefix; AKIAshort is not a key",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) is text


def test_nested_input_is_walked_keeping_keys_and_non_strings() -> None:
    tool_input: JsonValue = {
        "url": "https://api.example.com",
        "headers": {"Authorization": f"Bearer {JWT}", "Accept": "application/json"},
        "retries": 3,
        "verify": True,
        "proxy": None,
        "args": ["--token", GITHUB_TOKEN, {"note": f"aws {AWS_KEY}"}, 1.5],
    }

    assert redact(tool_input) == {
        "url": "https://api.example.com",
        "headers": {"Authorization": R, "Accept": "application/json"},
        "retries": 3,
        "verify": True,
        "proxy": None,
        "args": ["--token", R, {"note": f"aws {R}"}, 1.5],
    }


def test_string_values_under_secret_keys_are_redacted_whole() -> None:
    tool_input: JsonValue = {
        "password": "hunter2",
        "db": {"Api-Key": "plain-looking", "user": "bob", "token": "abc", "pin": 1234},
        "session_cookie": "",
    }

    assert redact(tool_input) == {
        "password": R,
        "db": {"Api-Key": R, "user": "bob", "token": R, "pin": 1234},
        "session_cookie": "",
    }


def test_secret_keys_can_be_switched_off() -> None:
    assert redact({"password": "hunter2"}, secret_keys=None) == {"password": "hunter2"}


def test_redact_returns_the_same_object_when_nothing_matched() -> None:
    clean: JsonValue = {"a": ["b", {"c": 1}], "d": "e"}

    assert redact(clean) is clean


def test_redact_never_mutates_its_input() -> None:
    original: JsonValue = {"args": [f"key={OPENAI_KEY}"], "keep": {"x": "y"}}
    snapshot = {"args": [f"key={OPENAI_KEY}"], "keep": {"x": "y"}}

    redacted = redact(original)

    assert original == snapshot
    assert isinstance(redacted, dict)
    assert redacted["keep"] is original["keep"]  # type: ignore[index, call-overload]


def test_custom_patterns_and_replacement() -> None:
    patterns = [r"\b\d{3}-\d{2}-\d{4}\b", re.compile(r"pin (?P<secret>\d+)")]

    assert redact("ssn 123-45-6789, pin 9876", patterns, replacement="***") == "ssn ***, pin ***"


def test_an_invalid_pattern_is_rejected() -> None:
    with pytest.raises(HookConfigError, match="invalid secret pattern"):
        RedactionHook(["("])


def test_a_single_string_instead_of_a_pattern_list_is_rejected() -> None:
    with pytest.raises(HookConfigError, match="sequence of patterns"):
        RedactionHook(r"sk-\w+")


async def test_hook_returns_modified_input_when_something_was_redacted() -> None:
    hook = RedactionHook()

    action = await hook.on_event(_ctx({"cmd": f"curl -H 'x-api-key: {ANTHROPIC_KEY}'"}))

    assert action == ModifyToolInput(new_input={"cmd": f"curl -H 'x-api-key: {R}'"})


async def test_hook_continues_when_the_input_is_clean() -> None:
    assert await RedactionHook().on_event(_ctx({"path": "/tmp/a.txt"})) == Continue()
    assert await RedactionHook().on_event(_ctx(None)) == Continue()


async def test_hook_uses_its_own_patterns_and_replacement() -> None:
    hook = RedactionHook([r"internal-\d+"], replacement="<gone>", secret_keys=None)

    action = await hook.on_event(_ctx(["internal-42", f"password={OPENAI_KEY}"]))

    assert action == ModifyToolInput(new_input=["<gone>", f"password={OPENAI_KEY}"])


async def test_redaction_applies_through_the_registry_at_pre_tool_use_only() -> None:
    registry = HookRegistry()
    registry.add(RedactionHook())
    tool_input: JsonValue = {"key": AWS_KEY}

    assert await registry.dispatch(_ctx(tool_input)) == ModifyToolInput(new_input={"key": R})
    assert await registry.dispatch(_ctx(tool_input, HookPoint.POST_TOOL_USE)) == Continue()


_secrets = st.sampled_from([AWS_KEY, OPENAI_KEY, ANTHROPIC_KEY, GITHUB_TOKEN, JWT, PEM])
_filler = st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=30)


@given(before=_filler, secret=_secrets, after=_filler)
def test_a_secret_never_survives_whatever_surrounds_it(
    before: str, secret: str, after: str
) -> None:
    redacted = redact(f"{before} {secret} {after}")

    assert isinstance(redacted, str)
    assert secret not in redacted
    assert redact(redacted) == redacted


def test_default_patterns_are_compiled_once() -> None:
    assert all(isinstance(p, re.Pattern) for p in DEFAULT_SECRET_PATTERNS)


_mixed_text = st.lists(
    st.sampled_from([*_SECRET_PARTS, " ", "=", ":", "'", '"', "\n", "x"]), max_size=12
).map("".join)


@given(text=st.one_of(_filler, _mixed_text))
def test_redacting_twice_changes_nothing_more(text: str) -> None:
    once = redact(text)

    assert redact(once) == once


def test_custom_secret_keys_pattern_is_matched_against_whole_keys() -> None:
    tool_input: JsonValue = {"pin": "1234", "pinned": "yes", "password": "kept"}

    assert redact(tool_input, secret_keys=r"pin") == {"pin": R, "pinned": "yes", "password": "kept"}


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("PASSWORD='ab'cd rest", "PASSWORD=[REDACTED] rest"),
        ("PASSWORD=''0", "PASSWORD=[REDACTED]"),
        ("api_key: \"a\"'b'c;", "api_key: [REDACTED];"),
        ('{"password": "abc"}', '{"password": [REDACTED]}'),
    ],
)
def test_a_quoted_secret_runs_on_into_what_follows_its_quote_as_a_shell_joins_it(
    text: str, redacted: str
) -> None:
    assert redact(text) == redacted
