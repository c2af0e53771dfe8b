"""A remote's stream read event by event, in time linear in what it sends.

The remote is untrusted: a stream of many small updates (tens of thousands
fit in `max_answer_bytes`) must not cost the caller's CPU the square of their
number. So the task a stream builds keeps its artifacts by id, and the answer's
text passed on as it grows is compared only against what each update carries.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import Final

from a2a.types import Artifact, Message, Part, StreamResponse, Task

ANSWER: Final = "answer"
"""The artifact a neuron server streams its answer in (`A2AExecutor`)."""


class StreamedTask:
    """The task a remote's stream builds, and the message it answers with instead, if it does.

    `on_text` (when given) gets the answer's text as it grows: see `StreamedText`.
    """

    def __init__(self, on_text: Callable[[str], None] | None = None) -> None:
        """Start with no task."""
        self.task: Task | None = None
        self._artifacts: dict[str, Artifact] = {}
        self._text = None if on_text is None else StreamedText(on_text)

    def apply(self, event: StreamResponse) -> Message | None:
        """Apply `event` to the task; return the message the remote answered with, if it did."""
        kind = event.WhichOneof("payload")
        if kind == "message":
            return event.message
        if kind == "task":
            self.task = event.task
            self._artifacts = {a.artifact_id: a for a in self.task.artifacts}
            if self._text is not None:
                answer = self._artifacts.get(ANSWER)
                self._text.replace("" if answer is None else _text(answer.parts))
        elif kind == "status_update":
            status = event.status_update
            self._task(status.task_id, status.context_id).status.CopyFrom(status.status)
        elif kind == "artifact_update":
            self._update(event)
        return None

    def _task(self, task_id: str, context_id: str) -> Task:
        if self.task is None:
            self.task = Task(id=task_id, context_id=context_id)
        return self.task

    def _update(self, event: StreamResponse) -> None:
        update = event.artifact_update
        task = self._task(update.task_id, update.context_id)
        incoming = update.artifact
        artifact = self._artifacts.get(incoming.artifact_id)
        if artifact is None:
            artifact = task.artifacts.add()
            self._artifacts[incoming.artifact_id] = artifact
            artifact.CopyFrom(incoming)
        elif update.append:
            artifact.parts.extend(incoming.parts)
        else:
            artifact.CopyFrom(incoming)
        if self._text is not None and incoming.artifact_id == ANSWER:
            text = _text(incoming.parts)
            if update.append:
                self._text.extend(text)
            else:
                self._text.replace(text)


class StreamedText:
    """The answer's text passed on as it grows: what extends what was passed on is new.

    A neuron server appends a model call's text, starts again at the next call's,
    and ends with the whole answer: a text extending what was passed on passes
    on the rest; one that is a prefix of it passes nothing (yet); any other is a
    fresh start, passed on whole. The answer's text now is always a prefix of what
    was passed on (`shown[:at]`), kept in pieces: each update costs what it carries.
    """

    def __init__(self, on_text: Callable[[str], None]) -> None:
        """Pass new text to `on_text`."""
        self._on_text = on_text
        self._pieces: list[str] = []
        self._ends: list[int] = []  # where each piece ends in what was passed on
        self._at = 0  # the answer's text now is what was passed on, to here

    def extend(self, text: str) -> None:
        """The answer's text grew by `text`."""
        shown = self._ends[-1] if self._ends else 0
        overlap = min(len(text), shown - self._at)
        if self._slice(self._at, self._at + overlap) != text[:overlap]:
            self._restart(self._slice(0, self._at) + text)
            return
        self._at += overlap
        self._pass(text[overlap:])

    def replace(self, text: str) -> None:
        """The answer's text is now `text`."""
        shown = self._ends[-1] if self._ends else 0
        common = min(len(text), shown)
        if self._slice(0, common) != text[:common]:
            self._restart(text)
            return
        self._at = common
        self._pass(text[common:])

    def _pass(self, text: str) -> None:
        if text:
            self._on_text(text)
            self._pieces.append(text)
            self._ends.append(self._at + len(text))
            self._at += len(text)

    def _restart(self, text: str) -> None:
        self._pieces, self._ends, self._at = [], [], 0
        self._pass(text)

    def _slice(self, start: int, end: int) -> str:
        """What was passed on from `start` to `end`, joining only the pieces it spans."""
        if start >= end:
            return ""
        first = bisect.bisect_right(self._ends, start)
        last = bisect.bisect_left(self._ends, end)
        begin = self._ends[first - 1] if first else 0
        joined = "".join(self._pieces[first : last + 1])
        return joined[start - begin : end - begin]


def _text(parts: Iterable[Part]) -> str:
    return "".join(p.text for p in parts if p.HasField("text"))
