"""`neuron-turn chat`: talk to the model, one answer after another, on one session.

Each line typed is one turn on the session, dispatched through the local
orchestrator exactly as `run --session` does, so the history is the same one
`run`, `history` and `sessions` see. Answers stream as they arrive. A call
that waits for approval (`--approve-tool`) is asked about as `run` asks
(y/n/edit), and the answer goes on once it is decided. Lines
starting with `/` are commands (`/help`, `/tools`, `/cost`, `/attach PATH`,
`/exit`). Ctrl-D
(end of input) leaves; Ctrl-C while an answer streams cancels that answer
(the history is as it was before it, but for what tools the answer ran:
that is kept, as they did run), and Ctrl-C at the prompt clears the line,
as in Python's own REPL.

The event loop runs only while an answer is on its way: between answers the
program waits for the next line in `input()`, so readline's line editing and
history work as a user expects.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Final, TextIO

from moneyed import Money
from pydantic import JsonValue

from layer0 import (
    Content,
    CustomBlock,
    HistoryStore,
    ImageBlock,
    StateError,
    StateStore,
    TextBlock,
    TurnConfig,
    TurnInput,
    TurnOutput,
    usd,
)
from neuron_tool import ToolError, ToolRegistry

from ..loop._output_round import read_call_options
from ..loop.approval import Decision, PendingCall, resume_input
from ..loop.fork import ForkedSession, ForkError, fork_session
from ..loop.stop_tools import INPUT_STOP_TOOLS, check_stop_tools
from ..loop.waiting import waiting_calls
from ..plugins import PluginManager
from ._approve import Decide, Prompter, awaiting, decide_waiting, kept_partial, until_decided
from ._attachments import read_attachment
from ._closing import close_resource
from ._elicitation import TerminalQuestions
from ._errors import UsageError, classify
from ._images import ImageSaveError, images_note, save_images
from ._outcome import stop_note, turn_id_of
from ._prompt import utf8_text
from ._reading import TooLargeError, readline_bounded
from ._run import AGENT, REPORTED, TurnSpec, build_turn, offered_tools, streamed
from ._sessions import new_session_note, read_history, record_fork, record_run
from ._state_option import open_state_store, shown_state
from ._stream_output import TextPrinter
from ._termination import terminated
from ._unsaved import unsaved_line, unsaved_of
from ._visible import json_shown_on, shown_on
from ._waiting import WaitingLine, on_terminal, watched

__all__ = ["COMMANDS", "Chat", "ChatTotals", "PausedHint", "chat"]

COMMANDS: Final = {
    "/help": "list these commands",
    "/tools": "the tools the model may call",
    "/cost": "tokens and cost of this chat so far",
    "/attach": "send an image, a PDF or a text file with the next message: /attach PATH",
    "/back": "go back to after your Nth message: /back N goes on in a new session holding "
    "that much (this one is kept)",
    "/exit": "leave (Ctrl-D too); the session is kept",
}
"""The chat's own commands and what each does."""

_PROG: Final = "neuron-turn"

PausedHint = Callable[[str, str, Sequence[PendingCall]], int]
"""Says how to resume a session left waiting for approval; returns the exit code."""


@dataclass
class ChatTotals:
    """What the answers of one chat used, added up."""

    answers: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Money = field(default_factory=lambda: usd("0"))

    def add(self, output: TurnOutput) -> None:
        """Count one answer's use."""
        meta = output.metadata
        self.answers += 1
        self.tokens_in += meta.tokens_in
        self.tokens_out += meta.tokens_out
        self.cost = self.cost + meta.cost

    def text(self) -> str:
        """Return the totals as one line."""
        answers = f"{self.answers} answer{'' if self.answers == 1 else 's'}"
        tokens = f"{self.tokens_in} tokens in / {self.tokens_out} out"
        return f"{answers}, {tokens}, ${self.cost.amount:.4f}"


class Chat:
    """One session's conversation: its turn, its orchestrator and what it used."""

    def __init__(
        self,
        *,
        orchestrator: Any,
        store: StateStore,
        tools: Callable[[str], Awaitable[ToolRegistry]],
        session: str,
        metadata: JsonValue = None,
    ) -> None:
        """Talk through `orchestrator` on `session`; `tools(session)` gives the tools a run has now.

        `metadata` goes with each answer's input: the loop's options for it (usage
        limits, stop tools), as `run` sends them.
        """
        self.metadata = metadata
        self.orchestrator = orchestrator
        self.store = store
        self.tools = tools
        self.session = session
        self.totals = ChatTotals()
        self.attached: list[ImageBlock | CustomBlock] = []
        """Images and documents `/attach` added, sent with the next message."""
        self.attached_bytes = 0
        """What `attached` holds, in bytes read: one message carries at most `MAX_BYTES`."""
        self.save_images: Path | None = None
        """Where each answer's images are written (`--save-images`; None: named only)."""
        self.questions: TerminalQuestions | None = None
        """Puts the MCP servers' questions to the person (on a terminal only)."""
        self.state_shown = ""
        """The state as messages name it (`--state`, its password hidden)."""

    async def answer(
        self,
        text: str,
        on_event: Any,
        config: TurnConfig | None = None,
        *,
        decide: Decide | None = None,
    ) -> TurnOutput:
        """Run one turn on `text`, streaming its events to `on_event`; record it in the index.

        A turn that pauses for approval is put to `decide` and resumed with its
        decisions, streamed the same way, until it ends or `decide` gives up
        (the output returned then still awaits approval).
        """
        attached = self.attached
        message = Content([TextBlock(text=text), *attached]) if attached else Content(text)
        turn_input = TurnInput(
            message=message,
            trigger="user",
            session=self.session,
            config=config,
            metadata=self.metadata,
        )
        output = await streamed(self.orchestrator, turn_input, on_event)
        # Only once the message is in the session: a failed or cancelled answer, whose
        # message the user types again, keeps them for it.
        self.attached, self.attached_bytes = [], 0
        if decide is not None and awaiting(output):
            output = await until_decided(
                decide, self.session, output, self._resumer(on_event, config)
            )
        self.totals.add(output)
        await record_run(self.store, self.session, text)
        return output

    async def waiting(self) -> list[PendingCall]:
        """The calls the session's last turn left waiting for approval (none, mostly).

        Raises:
            layer0.ContextAssemblyError: the stored history does not parse.
        """
        return await waiting_calls(self.store, self.session)

    async def settle(
        self,
        pending: Sequence[PendingCall],
        on_event: Any,
        config: TurnConfig | None = None,
        *,
        decide: Decide,
    ) -> TurnOutput | None:
        """Put calls the session already waits on to `decide` and resume the turn with them.

        Returns the turn's output, or None if `decide` gave up before deciding.
        """
        output = await decide_waiting(
            decide, self.session, pending, self._resumer(on_event, config)
        )
        if output is not None:
            self.totals.add(output)
        return output

    def _resumer(
        self, on_event: Any, config: TurnConfig | None
    ) -> Callable[[list[Decision]], Awaitable[TurnOutput]]:
        async def resume(decisions: list[Decision]) -> TurnOutput:
            resumed = resume_input(self.session, decisions, config=config)
            return await streamed(self.orchestrator, resumed, on_event)

        return resume

    async def back(self, turns: int) -> tuple[ForkedSession, str | None]:
        """Go on in a new session holding this one's first `turns` turns (`fork_session`).

        This session is kept as it was. Returns the fork, and why the session index
        does not list it (None: it does).

        Raises:
            ForkError: the fork cannot be made (nothing was written); the chat stays here.
            StateError: the store failed; the chat stays here.
        """
        store = self.store
        if not isinstance(store, HistoryStore):
            raise TypeError(f"/back needs a store that keeps histories, not {type(store).__name__}")
        forked = await fork_session(store, self.session, turns=turns)
        self.session = forked.session
        try:
            await record_fork(store, forked)
        except StateError as exc:
            return forked, str(exc)
        return forked, None

    async def tools_text(self, allowed: Sequence[str] | None = None) -> str:
        """Return one line per tool the model may call now (of `allowed`, when given).

        Asked anew each time: an MCP server may have added a tool since (`--mcp`).
        """
        lines = [
            f"  {tool.name}: {_first_line(tool.description)}"
            for tool in await self.tools(self.session)
            if allowed is None or tool.name in allowed
        ]
        if allowed is None or {"write_memory", "delete_memory"} & set(allowed):
            lines.append("  write_memory, delete_memory: this session's memory (more with --grant)")
        return "\n".join(lines) or "  (none)"


async def open_chat(
    stack: AsyncExitStack,
    manager: PluginManager,
    spec: TurnSpec,
    *,
    session: str,
    state_path: str | None,
    metadata: JsonValue = None,
) -> tuple[Chat, str, str]:
    """Build the chat's turn and orchestrator; they close with `stack`.

    Returns the chat, the model that answers and what the session holds (a
    count of messages, or for a new session the note offering the nearest id).
    `metadata` goes with each answer (`Chat`).

    Raises:
        UnknownStopToolError: `metadata` names a stop tool the turn does not have
            (said now, not at every answer).
    """
    store: StateStore = open_state_store(state_path, manager=manager)
    stack.push_async_callback(close_resource, store)
    turn, model = await build_turn(stack, manager, spec, store)
    orchestrator = manager.get_orchestrator("local", agents={AGENT: turn}, store=store)
    history = await read_history(store, session)
    if isinstance(history, list) and history:
        count = len(history)
        held = f"session {session}, {count} message{'' if count == 1 else 's'} so far"
    else:
        held = await new_session_note(store, session) or f"session {session}"
    stops = read_call_options(metadata).stop_at_tools
    if stops:
        # The servers' tools are the runs' (tool sources), not `turn.tools`: as a run has them.
        check_stop_tools(stops, await offered_tools(turn, session), where=INPUT_STOP_TOOLS)
    chat = Chat(
        orchestrator=orchestrator,
        store=store,
        tools=partial(offered_tools, turn),
        session=session,
        metadata=metadata,
    )
    chat.questions = spec.questions
    return chat, model, held


def chat(
    manager: PluginManager,
    spec: TurnSpec,
    *,
    session: str | None = None,
    state_path: str | None = None,
    config: TurnConfig | None = None,
    metadata: JsonValue = None,
    verbose: bool = False,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    paused: PausedHint | None = None,
    save_images: Path | None = None,
) -> int:
    """Run the chat until end of input or `/exit`; return the exit code.

    `save_images`: the directory each answer's images are written to (None: named only).

    Errors of one answer (a provider failure) are reported and the chat goes
    on; errors building the turn (an unknown model or tool) are raised. A
    call waiting for approval is asked about on the chat's own input; when
    that input ends first, `paused(session, model, pending)` says how to
    resume and gives the exit code (`EXIT_AWAITING_APPROVAL` from the
    command line); it is 0 otherwise.
    """
    out, err = stdout or sys.stdout, stderr or sys.stderr
    reader = _Reader(stdin or sys.stdin, out)
    if reader.terminal:
        # Bound to each answer's prompter as it starts (`_one_answer`).
        spec = replace(spec, questions=TerminalQuestions())
    session_id = session or uuid.uuid4().hex[:12]
    with asyncio.Runner() as runner:
        stack = AsyncExitStack()
        try:
            chat_, model, held = runner.run(
                open_chat(
                    stack,
                    manager,
                    spec,
                    session=session_id,
                    state_path=state_path,
                    metadata=metadata,
                )
            )
            chat_.save_images = save_images
            chat_.state_shown = shown_state(state_path)
            given = session is not None
            _greet(err, model, held if given else f"new session {session_id}")
            waiting = _settle_earlier(runner, chat_, reader, out, err, config, verbose)
            if not waiting:
                waiting = _converse(runner, chat_, reader, out, err, config=config, verbose=verbose)
        finally:
            runner.run(stack.aclose())
    session_id = chat_.session  # `/back` may have moved the chat to a session of its own
    if waiting:
        return 0 if paused is None else paused(session_id, model, waiting)
    print(
        f"session {session_id} (continue with: neuron-turn chat --session {session_id})", file=err
    )
    return 0


def _converse(
    runner: asyncio.Runner,
    chat_: Chat,
    reader: _Reader,
    out: TextIO,
    err: TextIO,
    *,
    config: TurnConfig | None,
    verbose: bool,
) -> list[PendingCall]:
    """Answer line after line; return the calls still waiting for approval when it ends."""
    while True:
        try:
            line = reader.read()
        except KeyboardInterrupt:  # at the prompt: a fresh line, as Python's REPL does
            print(file=out)
            if terminated():  # SIGTERM: the chat ends
                return []
            continue
        except TooLargeError as exc:
            print(f"{_PROG}: that line holds {exc}; no model takes it, nothing was sent", file=err)
            continue
        if line is None:  # Ctrl-D
            if reader.terminal:
                print(file=out)
            return []
        try:
            text = utf8_text(line.strip(), "that line")
        except UsageError as exc:
            print(f"{_PROG}: {exc}; nothing was sent", file=err)
            continue
        if not text:
            continue
        if text.startswith("/"):
            if not _command(runner, text, chat_, err, config):
                return []
            continue

        def answer(on_event: Any, decide: Decide, text: str = text) -> Awaitable[TurnOutput]:
            return chat_.answer(text, on_event, config, decide=decide)

        pending = _one_answer(runner, chat_, reader, answer, out, err, verbose=verbose)
        if pending:  # the input ended while a call waited: nothing more can be asked
            return pending
        if terminated():  # SIGTERM cancelled the answer (keeping what it did): the chat ends
            return []


def _settle_earlier(
    runner: asyncio.Runner,
    chat_: Chat,
    reader: _Reader,
    out: TextIO,
    err: TextIO,
    config: TurnConfig | None,
    verbose: bool,
) -> list[PendingCall]:
    """Decide the calls an earlier turn of the session left waiting, before any new message.

    A new message on such a session is refused (`AwaitingApprovalError`), so
    they are asked about first. Returns those still waiting when input ends.
    """
    pending = runner.run(chat_.waiting())
    if not pending:
        return []
    print(f"{_PROG}: session {chat_.session} was left waiting for approval", file=err)

    def settle(on_event: Any, decide: Decide) -> Awaitable[TurnOutput | None]:
        return chat_.settle(pending, on_event, config, decide=decide)

    return _one_answer(runner, chat_, reader, settle, out, err, verbose=verbose)


_CANCELLED: Final = "(answer cancelled; the conversation is as it was before it)"
_CANCELLED_KEPT: Final = (
    "(answer cancelled; the tools it ran did run: the conversation keeps them, and the"
    " next answer goes on knowing it)"
)

Answering = Callable[[Any, Decide], Awaitable[TurnOutput | None]]
"""Runs one answer: given where its events go and who decides its paused calls."""


def _one_answer(
    runner: asyncio.Runner,
    chat_: Chat,
    reader: _Reader,
    answering: Answering,
    out: TextIO,
    err: TextIO,
    *,
    verbose: bool,
) -> list[PendingCall]:
    """Run `answering`; return the calls left waiting for approval (the input ended first)."""
    printer = TextPrinter(out, err, progress=verbose)
    terminal, same = on_terminal(err), on_terminal(err) and on_terminal(out)
    waiting = WaitingLine(err, terminal=terminal, may_draw=lambda: not (same and printer.mid_line))
    decide = _prompter(reader, err, printer, waiting)
    if chat_.questions is not None:
        chat_.questions.prompter = decide
    try:
        with waiting.owning_stderr():
            output = runner.run(watched(waiting, answering(waiting.wrap(printer), decide)))
    except KeyboardInterrupt as exc:
        printer.end_line()
        print(_CANCELLED if kept_partial(exc) is None else _CANCELLED_KEPT, file=err)
        return []
    except REPORTED as exc:
        printer.end_line()
        unsaved = unsaved_of(exc)
        if unsaved is not None:
            _, message, last_resort = unsaved_line(unsaved, exc, state=chat_.state_shown)
        else:
            # The turn's own error, when the orchestrator wrapped one the command line explains.
            cause = exc.__cause__ if isinstance(exc.__cause__, REPORTED) else exc
            (_, message), last_resort = classify(cause, model=None), None
        print(shown_on(err)(f"{_PROG}: error: {' '.join(message.split())}"), file=err)
        if last_resort is not None:
            print(json_shown_on(err)(last_resort), file=err)
        return []
    if output is None:  # the input ended before the earlier calls were decided
        return runner.run(chat_.waiting())
    printer.finish(output)
    _show_images(chat_, output, err)
    pending = awaiting(output)
    if pending:
        return pending
    note = stop_note(output, chat_.session, next_step="type the next message to go on")
    if note is not None:  # it may quote a hook's or a guardrail's words
        print(shown_on(err)(f"{_PROG}: {note}"), file=err)
    return []


def _show_images(chat_: Chat, output: TurnOutput, err: TextIO) -> None:
    """Write the answer's images where `--save-images` says, or say the session keeps them.

    A write that fails is reported and the chat goes on: the session holds the images.
    """
    kept = f"neuron-turn history {chat_.session} --json holds them"
    if chat_.save_images is None:
        shown = images_note(output, kept)
        if shown is not None:
            print(f"{_PROG}: {shown}", file=err)
        return
    try:
        lines = save_images(output, chat_.save_images, turn_id_of(output) or uuid.uuid4().hex)
    except ImageSaveError as exc:
        print(f"{_PROG}: error: --save-images: {exc}; {kept}", file=err)
        return
    for line in lines:
        print(shown_on(err)(line), file=err)  # a URL is the model's


def _prompter(reader: _Reader, err: TextIO, printer: TextPrinter, waiting: WaitingLine) -> Prompter:
    """Who decides a paused call: the person typing the chat, on the chat's own input."""

    def asking() -> None:
        printer.end_line()
        waiting.hold()

    if reader.terminal:
        return Prompter(reader.stdin, err, before=asking)

    def answer() -> str | None:
        # Echoed, as a terminal would show it, so the transcript reads question, answer.
        try:
            line = reader.line()
        except TooLargeError as exc:
            err.write(f"(a line of {exc}, dropped)\n")
            return ""  # no answer: the person is asked again
        if line is not None:
            err.write(line + "\n")
            err.flush()
        return line

    # Piped: the chat reads its input through Python's buffer, so the answers must too.
    return Prompter(reader.stdin, err, before=asking, lines=lambda: asyncio.to_thread(answer))


def _command(
    runner: asyncio.Runner, text: str, chat_: Chat, err: TextIO, config: TurnConfig | None
) -> bool:
    """Carry out a /command; return False to leave the chat."""
    name = text.split()[0]
    if name in ("/exit", "/quit"):
        return False
    if name == "/tools":
        allowed = None if config is None else config.allowed_tools
        try:
            # An MCP server's descriptions are its own words: on a terminal, shown inert.
            print(shown_on(err)(runner.run(chat_.tools_text(allowed))), file=err)
        except ToolError as exc:  # an MCP server gone: said, and the chat goes on
            print(shown_on(err)(f"{_PROG}: cannot list the tools: {exc}"), file=err)
    elif name == "/cost":
        print(chat_.totals.text(), file=err)
    elif name == "/attach":
        _attach(text.removeprefix("/attach").strip(), chat_, err)
    elif name == "/back":
        _back(runner, text.removeprefix("/back").strip(), chat_, err)
    elif name == "/help":
        for command, meaning in COMMANDS.items():
            print(f"  {command:<7} {meaning}", file=err)
    else:
        print(f"{_PROG}: unknown command {name}; /help lists them", file=err)
    return True


def _back(runner: asyncio.Runner, count: str, chat_: Chat, err: TextIO) -> None:
    """Go back to after the person's `count`th message, in a new session, or say why not."""
    try:
        # Past Python's 4,300 digits `int` raises: no conversation holds that many.
        messages = int(count) if count.isdecimal() else None
    except ValueError:
        messages = None
    if messages is None:
        print(f"{_PROG}: /back needs how many of your messages to keep: /back N", file=err)
        return
    try:
        forked, unlisted = runner.run(chat_.back(messages))
    except (ForkError, StateError) as exc:
        print(f"{_PROG}: {exc}; the chat goes on in session {chat_.session}", file=err)
        return
    print(
        f"{_PROG}: back after message {forked.turns} of {forked.source_turns}: the chat goes "
        f"on in session {forked.session}; session {forked.source} is kept as it was",
        file=err,
    )
    if unlisted is not None:
        print(f"{_PROG}: note: `neuron-turn sessions` does not list it ({unlisted})", file=err)


def _attach(path: str, chat_: Chat, err: TextIO) -> None:
    """Add the image or document at `path` to the next message, or say why it cannot go."""
    if not path:
        print(f"{_PROG}: /attach needs a file: /attach PATH", file=err)
        return
    try:
        file, size = read_attachment(path, used=chat_.attached_bytes)
    except UsageError as exc:
        print(f"{_PROG}: {exc}; nothing was attached", file=err)
        return
    chat_.attached.append(file)
    chat_.attached_bytes += size
    print(f"{_PROG}: attached {path}; it goes with your next message", file=err)


def _greet(err: TextIO, model: str, state: str) -> None:
    # `state` may name the kept session nearest the one given: any client's id.
    line = f"{_PROG} chat with {model} ({state}); /help lists commands, Ctrl-D or /exit leaves"
    print(shown_on(err)(line), file=err)


class _Reader:
    """Reads the user's lines: `input()` with a prompt on a terminal, plain lines otherwise."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.terminal = on_terminal(stdin) and stdin is sys.stdin
        if self.terminal:
            try:
                import readline  # noqa: F401  # line editing and history for input()
            except ImportError:
                pass

    def line(self) -> str | None:
        """Return the next line without its newline, or None at end of input."""
        line = self.read()
        return None if line is None else line.rstrip("\n")

    def read(self) -> str | None:
        """Return the next line, or None at end of input."""
        if self.terminal:
            try:
                return input("> ")
            except EOFError:
                return None
        buffer = getattr(self.stdin, "buffer", None)
        if buffer is None:  # a text stream without bytes underneath (io.StringIO)
            line = self.stdin.readline()
            return line if line else None
        data: bytes = readline_bounded(buffer)
        # Decoded here rather than by the stream, whose error handler depends on the
        # locale: bytes that are not UTF-8 reach the chat as lone surrogates, and the
        # line holding them is refused by name instead of ending the chat.
        return data.decode("utf-8", "surrogateescape") if data else None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
