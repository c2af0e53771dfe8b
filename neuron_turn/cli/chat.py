"""`neuron-turn chat`: talk to the model, one answer after another, on one session.

Each line typed is one turn on the session, dispatched through the local
orchestrator exactly as `run --session` does, so the history is the same one
`run`, `history` and `sessions` see. Answers stream as they arrive. Lines
starting with `/` are commands (`/help`, `/tools`, `/cost`, `/exit`). Ctrl-D
(end of input) leaves; Ctrl-C while an answer streams cancels that answer
(nothing of it is kept: the history is as it was before it), and Ctrl-C at
the prompt clears the line, as in Python's own REPL.

The event loop runs only while an answer is on its way: between answers the
program waits for the next line in `input()`, so readline's line editing and
history work as a user expects.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from moneyed import Money

from layer0 import StateStore, TurnConfig, TurnInput, TurnOutput, usd

from ..plugins import PluginManager
from ._closing import close_resource
from ._errors import classify
from ._outcome import stop_note
from ._run import AGENT, REPORTED, TurnSpec, build_turn
from ._sessions import new_session_note, read_history, record_run
from ._stream_output import TextPrinter
from ._waiting import WaitingLine, on_terminal, watched

__all__ = ["COMMANDS", "Chat", "ChatTotals", "chat"]

COMMANDS: Final = {
    "/help": "list these commands",
    "/tools": "the tools the model may call",
    "/cost": "tokens and cost of this chat so far",
    "/exit": "leave (Ctrl-D too); the session is kept",
}
"""The chat's own commands and what each does."""

_PROG: Final = "neuron-turn"


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
        self, *, orchestrator: Any, store: StateStore, tools: list[tuple[str, str]], session: str
    ) -> None:
        """Talk through `orchestrator` on `session`; `tools` are (name, description) pairs."""
        self.orchestrator = orchestrator
        self.store = store
        self.tools = tools
        self.session = session
        self.totals = ChatTotals()

    async def answer(
        self, text: str, on_event: Any, config: TurnConfig | None = None
    ) -> TurnOutput:
        """Run one turn on `text`, streaming its events to `on_event`; record it in the index."""
        turn_input = TurnInput(message=text, trigger="user", session=self.session, config=config)
        async with self.orchestrator.stream(AGENT, turn_input) as events:
            async for item in events:
                on_event(item.event)
        output: TurnOutput = events.result.output
        self.totals.add(output)
        await record_run(self.store, self.session, text)
        return output

    def tools_text(self) -> str:
        """Return one line per tool the model may call."""
        lines = [f"  {name}: {_first_line(description)}" for name, description in self.tools]
        memory = "  write_memory, delete_memory: this session's memory (more with --grant)"
        return "\n".join([*lines, memory])


async def open_chat(
    stack: AsyncExitStack,
    manager: PluginManager,
    spec: TurnSpec,
    *,
    session: str,
    state_path: str | None,
) -> tuple[Chat, str, str]:
    """Build the chat's turn and orchestrator; they close with `stack`.

    Returns the chat, the model that answers and what the session holds (a
    count of messages, or for a new session the note offering the nearest id).
    """
    options = {} if state_path is None else {"path": state_path}
    store = manager.get_state_store("sqlite", **options)
    stack.push_async_callback(close_resource, store)
    turn, model = await build_turn(stack, manager, spec, store)
    orchestrator = manager.get_orchestrator("local", agents={AGENT: turn}, store=store)
    tools = [(tool.name, tool.description) for tool in turn.tools]
    history = await read_history(store, session)
    if isinstance(history, list) and history:
        held = f"session {session}, {len(history)} messages so far"
    else:
        held = await new_session_note(store, session) or f"session {session}"
    chat = Chat(orchestrator=orchestrator, store=store, tools=tools, session=session)
    return chat, model, held


def chat(
    manager: PluginManager,
    spec: TurnSpec,
    *,
    session: str | None = None,
    state_path: str | None = None,
    config: TurnConfig | None = None,
    verbose: bool = False,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the chat until end of input or `/exit`; return the exit code (0).

    Errors of one answer (a provider failure) are reported and the chat goes
    on; errors building the turn (an unknown model or tool) are raised.
    """
    out, err = stdout or sys.stdout, stderr or sys.stderr
    reader = _Reader(stdin or sys.stdin, out)
    session_id = session or uuid.uuid4().hex[:12]
    with asyncio.Runner() as runner:
        stack = AsyncExitStack()
        try:
            chat_, model, held = runner.run(
                open_chat(stack, manager, spec, session=session_id, state_path=state_path)
            )
            given = session is not None
            _greet(err, model, held if given else f"new session {session_id}")
            _converse(runner, chat_, reader, out, err, config=config, verbose=verbose)
        finally:
            runner.run(stack.aclose())
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
) -> None:
    while True:
        try:
            line = reader.read()
        except KeyboardInterrupt:  # at the prompt: a fresh line, as Python's REPL does
            print(file=out)
            continue
        if line is None:  # Ctrl-D
            if reader.terminal:
                print(file=out)
            return
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            if not _command(text, chat_, err):
                return
            continue
        _one_answer(runner, chat_, text, out, err, config=config, verbose=verbose)


def _one_answer(
    runner: asyncio.Runner,
    chat_: Chat,
    text: str,
    out: TextIO,
    err: TextIO,
    *,
    config: TurnConfig | None,
    verbose: bool,
) -> None:
    printer = TextPrinter(out, err, progress=verbose)
    terminal, same = on_terminal(err), on_terminal(err) and on_terminal(out)
    waiting = WaitingLine(err, terminal=terminal, may_draw=lambda: not (same and printer.mid_line))
    try:
        with waiting.owning_stderr():
            output = runner.run(watched(waiting, chat_.answer(text, waiting.wrap(printer), config)))
    except KeyboardInterrupt:
        printer.end_line()
        print("(answer cancelled; the conversation is as it was before it)", file=err)
        return
    except REPORTED as exc:
        printer.end_line()
        # The turn's own error, when the orchestrator wrapped one the command line explains.
        cause = exc.__cause__ if isinstance(exc.__cause__, REPORTED) else exc
        _, message = classify(cause, model=None)
        print(f"{_PROG}: error: {' '.join(message.split())}", file=err)
        return
    printer.finish(output)
    note = stop_note(output, chat_.session, next_step="type the next message to go on")
    if note is not None:
        print(f"{_PROG}: {note}", file=err)


def _command(text: str, chat_: Chat, err: TextIO) -> bool:
    """Carry out a /command; return False to leave the chat."""
    name = text.split()[0]
    if name in ("/exit", "/quit"):
        return False
    if name == "/tools":
        print(chat_.tools_text(), file=err)
    elif name == "/cost":
        print(chat_.totals.text(), file=err)
    elif name == "/help":
        for command, meaning in COMMANDS.items():
            print(f"  {command:<7} {meaning}", file=err)
    else:
        print(f"{_PROG}: unknown command {name}; /help lists them", file=err)
    return True


def _greet(err: TextIO, model: str, state: str) -> None:
    print(
        f"{_PROG} chat with {model} ({state}); /help lists commands, Ctrl-D or /exit leaves",
        file=err,
    )


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

    def read(self) -> str | None:
        """Return the next line, or None at end of input."""
        if self.terminal:
            try:
                return input("> ")
            except EOFError:
                return None
        line = self.stdin.readline()
        return line if line else None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
