"""`Summarize`: the older part of the conversation replaced by a summary a model writes.

Kept as they are: system messages, the first user message (the task, in
most agent sessions) and the latest one (what the agent is working on
now), pinned messages with their exchanges, and the newest exchanges up to
`keep_recent` of the budget. Everything between goes to the
summarising model, through the same `Provider` contract as the turn (its
calls count in the turn's tokens and cost), in chunks that fit, each folded
into the summary so far. The summary comes back as one user message where
the summarised part was (one per stretch between kept messages, so the
conversation stays in its order); an earlier summary is summarised along
with the rest, never kept as if the user had asked it, so summaries do not
pile up.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from neuron_turn import (
    DocumentPart,
    ImagePart,
    Provider,
    ProviderError,
    ProviderMessage,
    ProviderRequest,
    ProviderResponseError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    describe_file,
)
from neuron_turn.loop.context import CompactionBudget
from neuron_turn.loop.exchanges import exchanges, has_tool_result, starts_with_user
from neuron_turn.loop.tokens import CHARS_PER_TOKEN, estimate_tokens

from ._options import checked_count, checked_fraction, checked_mapping, checked_text
from .errors import StrategyOptionError
from .staged import Staged

__all__ = ["SUMMARY_PREFIX", "SUMMARY_SYSTEM", "Summarize"]

logger: Final = logging.getLogger("neuron_context_strategies")

SUMMARY_PREFIX: Final = "[Summary of the earlier conversation]"
"""The first line of a summary message."""

SUMMARY_SYSTEM: Final = (
    "You compress the history of a conversation between a user and an AI agent that "
    "uses tools, so the agent can go on without it. Keep every fact, number, name, "
    "identifier, decision, result and open task the agent may need later; drop "
    "pleasantries and repetition. Write plain sentences, no preamble."
)
"""The system prompt of a summary call."""

_SUMMARY_CHARS_PER_TOKEN: Final = 8
"""A summary's longest text per token of `max_summary_tokens`: twice the estimate's 4,
so an honest answer within its token cap is never cut."""

_PROMPT_TOKENS: Final = 200
"""What the system prompt and a call's framing take, about."""

_MIN_CHUNK_TOKENS: Final = 256
"""The least a summary call reads, however small the summariser's window: fewer would
only make many calls that summarise nothing."""

_RESULT_CHARS: Final = 2_000
"""How much of one tool result the summariser sees."""


class Summarize(Staged):
    """Replaces the older part of the conversation with a summary written by a model.

    Alone (`summarize`), it slides when even the summary does not fit (or
    the summary call fails, which is logged); in `tiered`, it comes after
    clearing tool results. `calls` counts the summary calls made.
    """

    name = "summarize"

    def __init__(
        self,
        *,
        model: str | None = None,
        keep_recent: float = 0.5,
        max_summary_tokens: int = 1_024,
        provider_options: Mapping[str, Any] | None = None,
    ) -> None:
        """Summarise with `model`, keeping the newest `keep_recent` of the budget verbatim.

        Args:
            model: the model that writes summaries. None: the turn's own. A bare
                name (`claude-haiku-4-5`) asks the turn's provider for that model;
                `provider:model` builds that provider from the installed plugins,
                with `provider_options`.
            keep_recent: the fraction of the budget the newest exchanges keep verbatim.
            max_summary_tokens: the summary's output cap.
            provider_options: options of the provider named in `model`.

        Raises:
            StrategyOptionError: `keep_recent` is not in (0, 1), `max_summary_tokens` is
                no whole number of at least 1, `model` no name or one of a provider that
                is not installed, `provider_options` no mapping (all checked now, not at
                the first summary an hour into a session).
        """
        self.keep_recent = checked_fraction("keep_recent", keep_recent)
        self.max_summary_tokens = checked_count("max_summary_tokens", max_summary_tokens, least=1)
        self.model = checked_text("model", model)
        if self.model is not None and ":" in self.model:
            _check_provider(self.model)
        self.provider_options = checked_mapping("provider_options", provider_options)
        self.calls = 0
        """Summary calls made so far."""
        self._own: Provider | None = None
        super().__init__([self])

    def __repr__(self) -> str:
        return f"Summarize(model={self.model!r}, keep_recent={self.keep_recent})"

    async def aclose(self) -> None:
        """Close the provider built for a `provider:model` in `model`, if one was built."""
        own, self._own = self._own, None
        close = getattr(own, "aclose", None)
        if close is not None:
            await close()

    async def reduce(
        self, messages: Sequence[ProviderMessage], budget: CompactionBudget
    ) -> list[ProviderMessage]:
        """Return the conversation with each stretch between kept spans replaced by its summary."""
        spans = exchanges(messages)
        keep = _kept_spans(messages, spans, budget, self.keep_recent)
        # Each stretch between kept spans is summarised apart and its summary put in
        # its place: one summary of all would tell what followed a kept message before it.
        stretches: list[list[ProviderMessage]] = []
        result: list[ProviderMessage | int] = []
        for n, span in enumerate(spans):
            if keep[n]:
                result.extend(messages[i] for i in span)
                continue
            if not result or not isinstance(result[-1], int):
                result.append(len(stretches))
                stretches.append([])
            stretches[-1].extend(messages[i] for i in span)
        if not stretches:
            return list(messages)
        notes: list[ProviderMessage] = []
        try:
            for stretch in stretches:
                summary = await self._summarize(stretch, budget)
                notes.append(ProviderMessage("user", [TextPart(f"{SUMMARY_PREFIX}\n{summary}")]))
        except ProviderError as exc:
            # An hour-long session should not fail on one summary call; the
            # strategy slides instead, and says so.
            logger.warning("summary call failed (%s); dropping the older messages instead", exc)
            return list(messages)
        return starts_with_user([notes[m] if isinstance(m, int) else m for m in result])

    async def _summarize(self, middle: Sequence[ProviderMessage], budget: CompactionBudget) -> str:
        provider, model = self._summarizer(budget)
        summary = ""
        for chunk in _chunks(
            _transcript(middle), self._chunk_chars(middle, budget, provider, model)
        ):
            prompt = (
                f"Summary so far:\n{summary}\n\nConversation to add:\n{chunk}"
                if summary
                else f"Conversation:\n{chunk}"
            )
            request = ProviderRequest(
                model=model,
                messages=[ProviderMessage("user", [TextPart(prompt)])],
                max_tokens=self.max_summary_tokens,
                temperature=0,
                system=SUMMARY_SYSTEM,
            )
            self.calls += 1
            response = await provider.complete(request)
            text = "".join(p.text for p in response.content if isinstance(p, TextPart)).strip()
            if text:
                summary = self._capped(text)
        if not summary:
            raise ProviderResponseError("the summarising model wrote nothing")
        return summary

    def _chunk_chars(
        self,
        middle: Sequence[ProviderMessage],
        budget: CompactionBudget,
        provider: Provider,
        model: str,
    ) -> int:
        """How many characters of transcript one summary call reads.

        Half the budget, or of the summariser's own window when it says a smaller
        one (room left for the summary so far and the answer), in the turn's
        calibrated tokens: where a token is fewer than 4 characters (Chinese,
        Japanese, code) a chunk holds fewer characters, so the call still fits.
        """
        tokens = max(1_000, budget.limit // 2)
        window = getattr(provider, "context_window", None)
        size = window(model) if callable(window) else None
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            room = (size - 2 * self.max_summary_tokens - _PROMPT_TOKENS) // 2
            tokens = max(_MIN_CHUNK_TOKENS, min(tokens, room))
        estimated = estimate_tokens(middle)
        scale = budget.count(middle) / estimated if estimated else 1.0
        return max(1, int(tokens * CHARS_PER_TOKEN / max(scale, 1.0)))

    def _capped(self, text: str) -> str:
        """`text` cut to what `max_summary_tokens` allows.

        A model ignoring its cap (or hostile) must not grow the context, or the
        next chunk's prompt, without bound.
        """
        cap = self.max_summary_tokens * _SUMMARY_CHARS_PER_TOKEN
        if len(text) <= cap:
            return text
        logger.warning("the summary ran past its cap of %d characters; cut to it", cap)
        return f"{text[:cap]} [summary cut: it ran past {cap} characters]"

    def _summarizer(self, budget: CompactionBudget) -> tuple[Provider, str]:
        if self.model is None:
            return budget.provider, budget.model
        if ":" not in self.model:
            return budget.provider, self.model
        if self._own is None:
            from neuron_turn import get_provider

            self._own = get_provider(self.model, **self.provider_options)
        return budget.account(self._own), self.model.partition(":")[2]


def _check_provider(model: str) -> None:
    """Refuse a `provider:model` whose provider no installed plugin registers."""
    from neuron_turn import get_plugin_manager

    provider, _, name = model.partition(":")
    installed = get_plugin_manager().names("provider")
    if provider in installed and name:
        return
    raise StrategyOptionError(
        f"model {model!r} names no installed provider ({', '.join(installed) or 'none'}) "
        "and model; a model of the turn's own provider whose name holds ':' (an Ollama "
        f"tag) is written with its provider, as 'ollama:{model}'"
    )


def _kept_spans(
    messages: Sequence[ProviderMessage],
    spans: Sequence[range],
    budget: CompactionBudget,
    keep_recent: float,
) -> list[bool]:
    """Which spans stay verbatim: system, pinned, first and latest user message, newest.

    The first user message is the conversation's task, the latest the one
    being worked on.
    """
    keep = [any(messages[i].role == "system" or messages[i].pinned for i in s) for s in spans]
    asks = [
        n
        for n, span in enumerate(spans)
        if messages[span[0]].role == "user"
        and not has_tool_result(messages[span[0]])
        and not _is_summary(messages[span[0]])
    ]
    for n in asks[:1] + asks[-1:]:
        keep[n] = True
    room = int(budget.limit * keep_recent)
    used = 0
    for n in range(len(spans) - 1, -1, -1):
        if keep[n]:
            continue
        size = budget.count([messages[i] for i in spans[n]])
        if used + size > room and n != len(spans) - 1:
            break
        keep[n] = True
        used += size
    return keep


def _is_summary(message: ProviderMessage) -> bool:
    """Whether `message` is a summary this strategy wrote (no ask of the user's)."""
    first = message.content[0] if message.content else None
    return isinstance(first, TextPart) and first.text.startswith(SUMMARY_PREFIX)


def _transcript(messages: Sequence[ProviderMessage]) -> list[str]:
    """One line per part, as the summariser reads them; long results are cut."""
    lines: list[str] = []
    for message in messages:
        for part in message.content:
            if isinstance(part, TextPart):
                lines.append(f"{message.role}: {part.text}")
            elif isinstance(part, ToolUsePart):
                arguments = json.dumps(part.input, ensure_ascii=False)
                lines.append(f"assistant called {part.name}({arguments}) [id {part.id}]")
            elif isinstance(part, ToolResultPart):
                lines.extend(_result_lines(part))
            elif isinstance(part, DocumentPart):
                # The summary cannot hold the file; it can say one was sent.
                lines.append(f"{message.role} sent a document: {part.name or part.media_type}")
            elif isinstance(part, ImagePart):
                lines.append(f"{message.role} sent an image ({part.media_type})")
    return lines


def _result_lines(part: ToolResultPart) -> list[str]:
    """A tool result as the summariser reads it: its text, cut if long, then its files named."""
    content = part.content
    if len(content) > _RESULT_CHARS:
        content = content[:_RESULT_CHARS] + f" ... [{len(part.content)} characters]"
    failed = " (error)" if part.is_error else ""
    lines = [f"tool result{failed} [id {part.tool_use_id}]: {content}"]
    if part.files:
        # Named only: the summary cannot hold the files, it can say they were shown.
        files = "; ".join(describe_file(file) for file in part.files)
        lines.append(f"the tool returned with it [id {part.tool_use_id}]: {files}")
    return lines


def _chunks(lines: Sequence[str], limit: int) -> list[str]:
    """Join `lines` into chunks of `limit` characters at most (a longer line split across them).

    Split, not cut: what a line holds past one chunk is summarised too.
    """
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    pieces = (line[i : i + limit] for line in lines for i in range(0, len(line) or 1, limit))
    for line in pieces:
        if current and size + len(line) > limit:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks
