"""`RedactionHook` and `redact`: blank out secrets in tool inputs and log payloads.

A pattern with a group named `secret` has only that group replaced, so the
context stays readable (`password=[REDACTED]`, `Bearer [REDACTED]`); any other
pattern has its whole match replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from functools import lru_cache
from typing import Final

from pydantic import JsonValue

from layer0 import HookAction, HookContext, HookPoint, ModifyToolInput

from .errors import HookConfigError
from .registry import CONTINUE

__all__ = [
    "DEFAULT_REPLACEMENT",
    "DEFAULT_SECRET_KEYS",
    "DEFAULT_SECRET_PATTERNS",
    "RedactionHook",
    "redact",
]

DEFAULT_REPLACEMENT: Final = "[REDACTED]"
"""What a secret is replaced with."""

_KEY_WORDS: Final = (
    r"pass(?:word|wd|phrase)|pwd|secret|client[_-]?secret|api[_-]?key|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|(?:access|auth|refresh|session|bearer)[_-]?token"
)

DEFAULT_SECRET_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (
    # PEM private key blocks, also when cut off before the END line.
    re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)"
    ),
    # AWS access key ids (long-term AKIA, temporary ASIA, and the rarer kinds).
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
    # OpenAI- and Anthropic-style API keys: sk-..., sk-proj-..., sk-ant-api03-...
    re.compile(r"\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}"),
    # Other model providers' keys: Google (Gemini) AIza…, Groq gsk_, xAI xai-, Cerebras
    # csk-, Fireworks fw_, Hugging Face hf_; each a provider this project can call.
    re.compile(r"\b(?:AIza[0-9A-Za-z_-]{35}|(?:gsk_|xai-|csk-|fw_|hf_)[A-Za-z0-9]{20,})"),
    # GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained.
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    # JSON Web Tokens: header.payload.signature, header and payload start with `{"`.
    # Only at the start of a run of token characters, not at every `-eyJ` inside one
    # (`\b` allowed those): a run of them with no `.` was scanned once per start,
    # quadratic time that froze the event loop for minutes on a megabyte of it.
    re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # Bearer tokens in Authorization headers and the like.
    re.compile(r"\b(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]+)"),
    # Any other Authorization header: `Authorization: Basic dXNlcjpwYXNz`, `…: token x`.
    re.compile(
        r"\b(?i:authorization)[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?i:basic|bearer|digest|negotiate|token)\s+)?(?P<secret>[^\s\"',;]+)"
    ),
    # `password=...`, `api_key: "..."`, `"client_secret": "..."` inside free text.
    # The look-arounds, not a `\b`, bound the key word, so `DB_PASSWORD=` matches too.
    re.compile(
        rf"(?i:(?<![a-z0-9])(?:{_KEY_WORDS})(?![a-z0-9]))[\"']?\s*[:=]\s*"
        # Quoted and bare pieces run together, as a shell joins them: `PASSWORD='ab'cd`
        # is the secret `abcd`, so the `cd` after the closing quote is part of it. A
        # closing bracket right after a quote ends it: `{"password": "x"}` keeps its `}`.
        r"""(?P<secret>(?:"[^"]*"|'[^']*'|[^\s,;&"']+)(?:"[^"]*"|'[^']*'|[^\s,;&"'}\])]+)*)"""
    ),
)
"""The secrets `redact` looks for by default, in the order they are applied."""

DEFAULT_SECRET_KEYS: Final[re.Pattern[str]] = re.compile(
    rf"(?i)(?:[a-z0-9]+[_-])*(?:{_KEY_WORDS}|token|authorization|credentials?|cookie)"
)
"""Object keys whose string values are secrets in full, e.g. `{"password": "hunter2"}`."""


def redact(
    value: JsonValue,
    patterns: Sequence[re.Pattern[str] | str] = DEFAULT_SECRET_PATTERNS,
    *,
    replacement: str = DEFAULT_REPLACEMENT,
    secret_keys: re.Pattern[str] | str | None = DEFAULT_SECRET_KEYS,
) -> JsonValue:
    """Return `value` with secrets in its strings replaced by `replacement`.

    Objects and arrays are walked; keys are kept, and strings under a key that
    fully matches `secret_keys` are replaced whole. When nothing matched,
    `value` itself is returned, so `redact(v) is v` means "no secrets found".

    Raises:
        HookConfigError: a pattern is not a valid regular expression.
    """
    return _redactor(patterns, replacement, secret_keys).json(value)


class RedactionHook:
    """At `pre_tool_use`, replaces secrets in the tool input before the tool sees them.

    Returns `ModifyToolInput` only when something was redacted, else `Continue`.
    """

    def __init__(
        self,
        patterns: Sequence[re.Pattern[str] | str] = DEFAULT_SECRET_PATTERNS,
        *,
        replacement: str = DEFAULT_REPLACEMENT,
        secret_keys: re.Pattern[str] | str | None = DEFAULT_SECRET_KEYS,
    ) -> None:
        """Compile the patterns once.

        Raises:
            HookConfigError: a pattern is not a valid regular expression.
        """
        self._redactor = _redactor(patterns, replacement, secret_keys)

    @property
    def points(self) -> Set[HookPoint]:
        """Only `pre_tool_use`: the one point where the input can still be changed."""
        return _POINTS

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Return the redacted input as `ModifyToolInput`, or `Continue` if it was clean."""
        redacted = self._redactor.json(ctx.tool_input)
        return CONTINUE if redacted is ctx.tool_input else ModifyToolInput(new_input=redacted)


_POINTS: Final = frozenset({HookPoint.PRE_TOOL_USE})


class _Redactor:
    """Applies compiled patterns to JSON values, returning unchanged parts as-is."""

    def __init__(
        self,
        patterns: tuple[re.Pattern[str], ...],
        *,
        replacement: str,
        secret_keys: re.Pattern[str] | None,
    ) -> None:
        self.patterns = patterns
        self.replacement = replacement
        self.secret_keys = secret_keys

    def json(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            items = [self.json(item) for item in value]
            return value if _same(items, value) else items
        if isinstance(value, dict):
            fields = {key: self.field(key, item) for key, item in value.items()}
            return value if _same(fields.values(), value.values()) else fields
        return value

    def field(self, key: str, value: JsonValue) -> JsonValue:
        if isinstance(value, str) and value and _is_secret_key(self.secret_keys, key):
            return self.replacement
        return self.json(value)

    def text(self, text: str) -> str:
        redacted = text
        for pattern in self.patterns:
            redacted = pattern.sub(self._replace, redacted)
        # Equal text means no match; keep the original object so callers can test `is`.
        return text if redacted == text else redacted

    def _replace(self, match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex or match.start("secret") < 0:
            return self.replacement
        start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
        whole = match.group(0)
        return whole[:start] + self.replacement + whole[end:]


_DEFAULT_REDACTOR: Final = _Redactor(
    DEFAULT_SECRET_PATTERNS,
    replacement=DEFAULT_REPLACEMENT,
    secret_keys=DEFAULT_SECRET_KEYS,
)


def _redactor(
    patterns: Sequence[re.Pattern[str] | str],
    replacement: str,
    secret_keys: re.Pattern[str] | str | None,
) -> _Redactor:
    """The redactor for these settings; the defaults share one, built at import."""
    if (
        patterns is DEFAULT_SECRET_PATTERNS
        and replacement == DEFAULT_REPLACEMENT
        and secret_keys is DEFAULT_SECRET_KEYS
    ):
        return _DEFAULT_REDACTOR
    return _Redactor(
        _compile(patterns),
        replacement=replacement,
        secret_keys=None if secret_keys is None else _compile_one(secret_keys),
    )


@lru_cache(maxsize=4096)
def _is_secret_key(secret_keys: re.Pattern[str] | None, key: str) -> bool:
    # Cached because tool inputs repeat the same few keys call after call.
    return secret_keys is not None and secret_keys.fullmatch(key) is not None


def _same(new: Iterable[object], old: Iterable[object]) -> bool:
    """Whether two iterables hold the very same objects, in order."""
    return all(a is b for a, b in zip(new, old, strict=True))


def _compile(patterns: Sequence[re.Pattern[str] | str]) -> tuple[re.Pattern[str], ...]:
    if isinstance(patterns, str):
        raise HookConfigError(f"patterns takes a sequence of patterns; got the string {patterns!r}")
    return tuple(_compile_one(pattern) for pattern in patterns)


def _compile_one(pattern: re.Pattern[str] | str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise HookConfigError(f"invalid secret pattern {pattern!r}: {exc}") from exc
