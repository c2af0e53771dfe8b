"""Tool calls that wait for a person: `--approve-tool`, the `y/n/edit` prompt, `resume`.

`neuron-turn run --approve-tool NAME_OR_GLOB` makes those tools' calls wait
for approval (plugins' policies add theirs). When the turn pauses with a
terminal on stdin and stderr, `Prompter` shows each pending call and asks;
the turn then resumes in this process, and may pause again. Without a
terminal (or with `--json`/`--jsonl`) the command exits with
`EXIT_AWAITING_APPROVAL` and prints the pending calls and the exact
`neuron-turn resume SESSION --approve ID ...` command on stderr; `resume`
takes every option `run` takes, so the same turn is built again, from the
state file, in a new process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, TextIO

from moneyed import Money
from pydantic import JsonValue

from layer0 import PartialTurn, TurnConfig, TurnInput, TurnMetadata, TurnOutput, partial_of, usd

from ..loop._output_round import read_call_options
from ..loop.approval import (
    AWAITING_APPROVAL,
    Decision,
    InvalidEditedInputError,
    NotAwaitingApprovalError,
    PendingCall,
    pending_approvals,
    resume_input,
)
from ._errors import EXIT_AWAITING_APPROVAL, chain_of
from ._hosted_token import hosted_tool_text
from ._reading import json_value
from ._sessions import session_id
from ._state_option import shown_state
from ._visible import shown_on

PROG: Final = "neuron-turn"
HIDDEN_VALUE: Final = "<hidden>"
"""What a resume command shows for a provider option naming a secret (`--option api_key=...`)."""
_SECRET_KEY: Final = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)
_SECRET_QUERY: Final = re.compile(
    r"(?P<name>[?&][^=&#]*(?:key|token|secret|password|credential)[^=&#]*=)[^&#]*",
    re.IGNORECASE,
)

# Options of `run` that do not carry over to its `resume` command.
_NOT_CARRIED: Final = frozenset(
    {
        "prompt",
        "session",
        "json",
        "jsonl",
        "verbose",
        "model",
        "approve",
        "input",
        "deny",
        "reason",
        "answer",
        "failed",
        "output_schema",  # parsed, the file's path is gone; the hint asks for it
        "output_mode",  # only with --output-schema: the hint names them beside it
        "strict_output",
        "output_text",
    }
)


class Decide(Protocol):
    """Asks a person about a paused turn's calls; None leaves the turn paused."""

    def __call__(
        self, session: str, pending: Sequence[PendingCall], problem: str | None
    ) -> Awaitable[list[Decision] | None]:
        """Return one decision per call of `pending`; `problem` says why the last ones failed."""
        ...


def add_approve_tool_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--approve-tool NAME_OR_GLOB` (repeatable) to a command that builds the turn."""
    parser.add_argument(
        "--approve-tool",
        action="append",
        default=[],
        metavar="NAME_OR_GLOB",
        help="calls of this tool (a name or a pattern such as 'write_*') wait for your "
        "approval: asked on a terminal (`chat`: on its input), else the command exits 15 "
        "and prints how to resume (repeat)",
    )


def add_resume_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_run_options: Callable[[argparse.ArgumentParser], None],
    handler: Callable[[argparse.Namespace], int],
    epilog: str,
) -> None:
    """Add `resume SESSION --approve ID | --deny ID ...`, taking every option `run` takes."""
    resume = commands.add_parser(
        "resume",
        help="continue a turn paused for approval, or one that failed after its tools ran",
        description="Continue the turn that paused in SESSION waiting for approval: give one "
        "--approve ID or --deny ID per pending call (`run` printed them), and the same turn "
        "options `run` had (--model, --tool, --state, ...). The approved calls run, the model "
        "reads each denial's reason, and the turn goes on as `run` would; it may pause again. "
        "With no decision, continue the turn that failed in SESSION after its tools ran "
        "(`run` printed the command): the model goes on from their results, which are kept "
        "in the session, and no tool runs again.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    resume.add_argument(
        "session", type=session_id, metavar="SESSION", help="the paused session's id"
    )
    decisions = resume.add_argument_group("decisions (one per pending call, in any order)")
    decisions.add_argument(
        "--approve", action=_Approve, metavar="ID", help="run call ID as the model asked"
    )
    decisions.add_argument(
        "--input",
        action=_EditInput,
        type=_json_value,
        metavar="JSON",
        help="after --approve ID: run that call with this input instead",
    )
    decisions.add_argument(
        "--deny", action=_Deny, metavar="ID", help="do not run call ID; the model is told"
    )
    decisions.add_argument(
        "--reason", action=_Reason, metavar="TEXT", help="after --deny ID: why (the model reads it)"
    )
    decisions.add_argument(
        "--answer",
        action=_Answer,
        nargs=2,
        metavar=("ID", "JSON"),
        help="answer call ID of an external tool (which you carried out) with its result, "
        "a JSON value the model reads (a text in quotes: '\"blue\"')",
    )
    decisions.add_argument(
        "--failed",
        action=_Failed,
        nargs=0,
        help="after --answer ID JSON: the call failed, and JSON says how",
    )
    decisions.add_argument(
        "--always",
        action=_Always,
        nargs=0,
        help="after --approve ID or --deny ID: decide that tool's later calls in this session "
        "the same way, without asking",
    )
    add_run_options(resume)
    resume.set_defaults(handler=handler, prompt="", decisions=[])


def awaiting(output: TurnOutput) -> list[PendingCall]:
    """Return the calls `output` waits on (empty unless the turn paused for approval)."""
    return pending_approvals(output) if output.exit_reason == AWAITING_APPROVAL else []


def print_resume_hint(
    args: argparse.Namespace,
    add_run_options: Callable[[argparse.ArgumentParser], None],
    session: str,
    model: str | None,
    pending: Sequence[PendingCall],
    err: TextIO,
) -> int:
    """Print what waits and the `resume` commands that continue it; return its exit code."""
    scratch = argparse.ArgumentParser(add_help=False)
    add_run_options(scratch)
    options = resume_options(args, scratch, model)
    base = [PROG, "resume", session]
    approve = [
        arg
        for call in pending
        for arg in (("--answer", call.id, "JSON") if call.external else ("--approve", call.id))
    ]
    deny = [arg for call in pending for arg in ("--deny", call.id, "--reason", "...")]
    own = [call for call in pending if not call.external]
    waits = (
        "approval of"
        if len(own) == len(pending)
        else ("the result of" if not own else "a decision on")
    )
    lines = [
        f"{PROG}: the turn is waiting for {waits} {len(pending)} tool call(s) "
        f"in session {session}:",
        *(_pending_line(call) for call in pending),
        "continue it with one decision per call:",
        f"  {'answer' if not own else 'approve'}: {shlex.join([*base, *approve, *options])}",
        f"  deny:    {shlex.join([*base, *deny, *options])}",
    ]
    editable = [call for call in own if not call.hosted]
    if editable:
        first = editable[0]
        lines += [
            "  (run a call with other input: --approve ID --input JSON, e.g. "
            f"{shlex.join(['--approve', first.id, '--input', _json(first.input)])})",
            "  (decide a tool's later calls in this session too: --always after its decision)",
        ]
    if len(own) < len(pending):
        lines.append(
            "  (an external tool's call is yours to carry out: --answer ID JSON gives the "
            "model its result, a text in quotes; --failed after it if it failed)"
        )
    if getattr(args, "output_schema", None) is not None:
        lines.append(f"  (add the {_output_flags(args)} this run had)")
    err.write(shown_on(err)("\n".join(lines)) + "\n")
    err.flush()
    return EXIT_AWAITING_APPROVAL


def _output_flags(args: argparse.Namespace) -> str:
    """The typed answer's options a resume must give again: the schema's file, its mode, strict."""
    flags = ["--output-schema FILE"] * len(args.output_schema)
    if args.output_mode is not None:
        flags += ["--output-mode", args.output_mode]
    if args.strict_output is not None:
        flags += ["--strict-output", "on" if args.strict_output else "off"]
    if args.output_text:
        flags.append("--output-text")
    return " ".join(flags)


def _pending_line(call: PendingCall) -> str:
    return f"  {call.id}  {call.name}  {_json(call.input)}{_whose(call)}"


def _whose(call: PendingCall) -> str:
    """What the person does with `call`, when it is not an ordinary approval."""
    if call.external:
        return "  (an external tool: you carry it out)"
    if call.hosted:
        return "  (a remote MCP server's call: approved, the provider runs it as asked)"
    return ""


def kept_part_hint(
    args: argparse.Namespace,
    add_run_options: Callable[[argparse.ArgumentParser], None],
    exc: BaseException,
) -> str:
    """Return what to add to the error line of a turn whose failed part was kept ("" if none).

    The session holds that part's tool calls and results, so running the same
    prompt again would ask the model twice; `resume SESSION` goes on instead,
    within what the part left of the run's limits (turns, cost, time), so the
    two parts together keep to the limits the run was given.
    """
    partial = kept_partial(exc)
    session = None if partial is None else partial.continuation.session
    if partial is None or session is None:
        return ""
    scratch = argparse.ArgumentParser(add_help=False)
    add_run_options(scratch)
    left = _limits_left(args, partial.continuation)
    command = shlex.join([PROG, "resume", session, *resume_options(left, scratch, None)])
    return (
        f"; its tools' results are kept in session {session}, so continue it with "
        f"`{command}` rather than running it again"
    )


def _limits_left(args: argparse.Namespace, continuation: TurnInput) -> argparse.Namespace:
    """`args` with the limits a continuation has left in place of the run's."""
    left = argparse.Namespace(**vars(args))
    usage = read_call_options(continuation.metadata).usage_limits
    for limit, value in (usage.to_json() if usage is not None else {}).items():
        setattr(left, f"max_{limit}", value)
    config = continuation.config
    if config is None:
        return left
    if config.max_turns is not None:
        # None left (stopped in the tools after its last model call): `--max-turns`
        # takes no 0, and the resume is asked for to answer from the tools' results.
        left.max_turns = max(config.max_turns, 1)
    if config.max_cost is not None:
        left.max_cost = config.max_cost
    if config.max_duration is not None:
        left.max_duration = config.max_duration / 1000
    return left


def kept_partial(exc: BaseException) -> PartialTurn | None:
    """The partial turn an error or cancellation in `exc`'s chain carries, if any.

    The orchestrator kept it: one it does not keep is taken off the error.
    """
    return next(filter(None, map(partial_of, chain_of(exc))), None)


def resume_options(
    args: argparse.Namespace, parser: argparse.ArgumentParser, model: str | None
) -> list[str]:
    """Return the command-line options that rebuild this run's turn for `resume`.

    Read from the parsed options against `parser`'s (holding `run`'s options,
    which `resume` takes too), so an option added to `run` later carries over.
    """
    words = [] if model is None and args.model is None else ["--model", model or args.model]
    for action in parser._actions:
        dest = action.dest
        if not action.option_strings or dest in _NOT_CARRIED or not hasattr(args, dest):
            continue
        value = getattr(args, dest)
        if value is None or value == action.default:
            continue
        flag = action.option_strings[0]
        if action.nargs == 0:  # a flag (`--verbose`): given or not
            if value:
                words.append(flag)
            continue
        for item in value if isinstance(value, list) else [value]:
            words.extend([flag, _option_text(dest, item)])
    if getattr(args, "output_type", None) is not None and args.output_text:
        words.append("--output-text")  # beside --output-schema the hint names it instead
    return words


def _option_text(dest: str, value: Any) -> str:
    """A parsed option value back as the text that parses to it."""
    if isinstance(value, Money):
        return str(value.amount)
    if dest in ("option", "context_option"):
        key, item = value
        if dest == "option" and _SECRET_KEY.search(key):
            # A key given on the command line is not repeated in messages (logs keep them).
            return f"{key}={HIDDEN_VALUE}"
        text = _value_text(item)
        # A URL's password (base_url=https://user:PASSWORD@host) neither.
        return f"{key}={_secrets_hidden(text) if dest == 'option' else text}"
    if dest == "thinking" and isinstance(value, bool):
        return "on" if value else "off"
    if dest == "hosted_tool":
        return _url_hidden(hosted_tool_text(value))
    if dest == "mcp_url":
        return _secrets_hidden(str(value))
    return str(value)


def _secrets_hidden(text: str) -> str:
    """`text` with a URL's password, and query values named as secrets (`?api_key=`), hidden."""
    if "://" not in text:
        return text
    return _SECRET_QUERY.sub(r"\g<name>***", shown_state(text))


def _url_hidden(text: str) -> str:
    """A hosted tool's JSON with its server URL's password and secret query values hidden."""
    if not text.startswith("{"):
        return text  # a bare name: no URL in it
    data = json.loads(text)
    if isinstance(data.get("url"), str):
        data["url"] = _secrets_hidden(data["url"])
    return json.dumps(data, ensure_ascii=False)


def _value_text(item: Any) -> str:
    """`KEY=VALUE`'s VALUE as given: JSON, or text that does not parse as JSON (else quoted)."""
    if not isinstance(item, str):
        return json.dumps(item)
    try:
        json.loads(item)
    except ValueError:
        return item  # text that never parsed as JSON reads back as the same text
    return json.dumps(item)  # text that would read back as a number, true, ...: as a JSON string


async def until_decided(
    decide: Decide,
    session: str,
    output: TurnOutput,
    resume: Callable[[list[Decision]], Awaitable[TurnOutput]],
) -> TurnOutput:
    """Ask about each pause and resume with the answers, until the turn ends or the person stops.

    An edited input the turn refuses changes nothing, so the person is asked
    again, told why; any other refusal (the session moved on) ends the command.
    The output returned is the last one, its metadata (tokens, cost, model
    calls, tool calls, time) covering every part, for the summary line.
    """
    return _summed(await _settled(decide, session, awaiting(output), [output], resume))


async def decide_waiting(
    decide: Decide,
    session: str,
    pending: Sequence[PendingCall],
    resume: Callable[[list[Decision]], Awaitable[TurnOutput]],
) -> TurnOutput | None:
    """`until_decided` for calls a session already waits on, from an earlier process.

    Returns None when the person stopped before deciding them (end of input).
    """
    parts = await _settled(decide, session, pending, [], resume)
    return _summed(parts) if parts else None


async def _settled(
    decide: Decide,
    session: str,
    pending: Sequence[PendingCall],
    parts: list[TurnOutput],
    resume: Callable[[list[Decision]], Awaitable[TurnOutput]],
) -> list[TurnOutput]:
    """Decide `pending` and every pause after it; return `parts` with each resumed output."""
    problem: str | None = None
    while pending:
        decisions = await decide(session, pending, problem)
        if decisions is None:
            break
        try:
            parts.append(await resume(decisions))
        except InvalidEditedInputError as exc:
            problem = str(exc)
            continue
        problem = None
        pending = awaiting(parts[-1])
    return parts


def _summed(parts: Sequence[TurnOutput]) -> TurnOutput:
    last = parts[-1]
    if len(parts) == 1:
        return last
    metadata = TurnMetadata(
        tokens_in=sum(p.metadata.tokens_in for p in parts),
        tokens_out=sum(p.metadata.tokens_out for p in parts),
        cost=sum((p.metadata.cost for p in parts), start=usd()),
        turns_used=sum(p.metadata.turns_used for p in parts),
        tools_called=[record for p in parts for record in p.metadata.tools_called],
        duration=sum(p.metadata.duration for p in parts),
    )
    return last.model_copy(update={"metadata": metadata})


async def resume_paused(
    orchestrator: Any,
    session: str,
    decisions: Sequence[Decision],
    dispatch: Callable[[TurnInput], Awaitable[TurnOutput]],
    config: TurnConfig | None,
) -> TurnOutput:
    """Resume paused `session` with `decisions`, through the orchestrator that holds the pause.

    An orchestrator whose workflow waits durably for decisions (Temporal:
    `approvals` and `decide`) gets them there, so that workflow, and no
    other, resumes the turn once. Any other orchestrator gets the resume
    input as a new turn, which reads the pause from the session's history.

    Raises:
        NotAwaitingApprovalError: the orchestrator is durable and none of its
            workflows waits for approval in `session`.
    """
    approvals = getattr(orchestrator, "approvals", None)
    decide = getattr(orchestrator, "decide", None)
    if not (callable(approvals) and callable(decide)):
        return await dispatch(resume_input(session, decisions, config=config))
    waiting = await approvals(session=session)
    if not waiting:
        raise NotAwaitingApprovalError(
            f"no workflow waits for approval in session {session!r} (a pause recorded by "
            "another orchestrator resumes there, e.g. with --orchestrator local)"
        )
    decided = {d.id for d in decisions}
    fits = [w for w in waiting if {c.id for c in w.calls} == decided]
    target = (fits or waiting)[0]
    result = await decide(target.workflow_id, decisions, pause=target.pause)
    output: TurnOutput = result.output
    return output


_QUESTION: Final = "  run it? [y]es / [n]o / [e]dit / [a]lways / ne[v]er: "
"""`always` and `never` decide the tool's later calls in the session too (`Decision.always`)."""


_HOSTED_QUESTION: Final = "  let the provider run it? [y]es / [n]o: "
"""A remote MCP server's call: run as the model made it, or not; no edit, no `always`."""

_ANSWER_QUESTION: Final = "  its result? [t]ext / [j]son / [n]o, refuse it: "
"""An external tool's call: the person carries it out and gives its result."""


class Prompter:
    """Asks on a terminal: shows each pending call and reads the person's answer from `stdin`.

    `y`, `n` or `edit`; `always` or `never` for the tool's later calls in the session too.
    An external tool's call is the person's to carry out: its result as text or JSON, or `n`.
    """

    def __init__(
        self,
        stdin: TextIO,
        err: TextIO,
        *,
        before: Callable[[], None] | None = None,
        environ: Mapping[str, str] | None = None,
        lines: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        """Read answers from `stdin`, write questions to `err`; call `before` first of all.

        `lines` returns the next line of the answers (None at their end) for a
        caller that reads `stdin` itself (the chat, when its input is piped);
        by default the descriptor of `stdin` is read when it is ready.
        """
        self.stdin = stdin
        self.err = err
        self.before = before
        self.environ = os.environ if environ is None else environ
        self.lines = lines
        self._unread = b""

    async def __call__(
        self, session: str, pending: Sequence[PendingCall], problem: str | None
    ) -> list[Decision] | None:
        """Return a decision for each call of `pending`, or None at the end of input."""
        if self.before is not None:
            self.before()
        if problem is not None:
            self._say(f"{PROG}: error: {problem}; decide again")
        self._say(f"{PROG}: {len(pending)} tool call(s) wait for your approval:")
        decisions = []
        for call in pending:
            decision = await self._decide(call)
            if decision is None:
                return None
            decisions.append(decision)
        return decisions

    async def _decide(self, call: PendingCall) -> Decision | None:
        if call.external:
            return await self._answer(call)
        self._say(f"  {call.id}: {call.name} {_json(call.input)}{_whose(call)}")
        while True:
            answer = await self._ask(_HOSTED_QUESTION if call.hosted else _QUESTION)
            if answer is None:
                return None
            choice = answer.strip().lower()
            if call.hosted and choice not in ("y", "yes", "n", "no"):
                self._say("  answer y or n")
                continue
            if choice in ("y", "yes", "a", "always"):
                return Decision.approve(call.id, always=choice[0] == "a")
            if choice in ("n", "no", "v", "never"):
                reason = await self._ask("  why not? (the model reads this): ")
                if reason is None:
                    return None
                return Decision.deny(call.id, reason.strip(), always=choice[0] == "v")
            if choice in ("e", "edit"):
                edited = await self._edit(call)
                if edited is not None:
                    return Decision.approve(call.id, edited[0])
                continue
            self._say(f"  answer y, n, e, or a / v to decide every later {call.name} call too")

    async def _answer(self, call: PendingCall) -> Decision | None:
        """The person carries out an external tool's call and gives its result, or refuses."""
        self._say(f"  {call.id}: {call.name} {_json(call.input)}  (an external tool: yours to do)")
        while True:
            answer = await self._ask(_ANSWER_QUESTION)
            if answer is None:
                return None
            choice = answer.strip().lower()
            if choice in ("t", "text"):
                text = await self._ask("  its result (the model reads this line): ")
                return None if text is None else Decision.answer(call.id, text.strip())
            if choice in ("j", "json"):
                line = await self._ask("  its result as JSON on one line: ")
                if line is None:
                    return None
                try:
                    value: JsonValue = json_value(line)
                except ValueError as exc:
                    self._say(f"  not JSON ({exc})")
                    continue
                return Decision.answer(call.id, value)
            if choice in ("n", "no"):
                reason = await self._ask("  why not? (the model reads this): ")
                return None if reason is None else Decision.deny(call.id, reason.strip())
            self._say("  answer t, j or n")

    async def _edit(self, call: PendingCall) -> tuple[JsonValue] | None:
        """The edited input, or None (the person is asked again)."""
        editor = self.environ.get("EDITOR", "").strip()
        if editor:
            text = await _run_editor(editor, call.input)
            if text is None:
                self._say(f"  the editor ({editor}) failed; the call is unchanged")
                return None
        else:
            line = await self._ask("  input as JSON on one line: ")
            if line is None:
                return None
            text = line
        try:
            value: JsonValue = json_value(text)
        except ValueError as exc:
            self._say(f"  not JSON ({exc}); the call is unchanged")
            return None
        return (value,)

    async def _ask(self, question: str) -> str | None:
        self.err.write(question)
        self.err.flush()
        return await self._line()

    async def ask(self, question: str) -> str | None:
        """Write `question` (shown inert) and return the person's answer, or None at the end."""
        return await self._ask(shown_on(self.err)(question))

    def say(self, line: str) -> None:
        """Write `line` for the person, shown inert (it may quote a model or a server)."""
        self._say(line)

    def begin(self) -> None:
        """Make room to ask: end the answer's line, hold the waiting line."""
        if self.before is not None:
            self.before()

    async def _line(self) -> str | None:
        """The next line of `stdin`, or None at its end.

        Read from the descriptor when the event loop says it is readable, not
        in a thread: a thread blocked in `readline` would keep Ctrl-C from
        ending the command until Enter is pressed.
        """
        if self.lines is not None:
            return await self.lines()
        while b"\n" not in self._unread:
            chunk = await _read_when_ready(self.stdin.fileno())
            if not chunk:
                rest, self._unread = self._unread, b""
                return rest.decode(errors="replace") if rest else None
            self._unread += chunk
        line, _, self._unread = self._unread.partition(b"\n")
        return line.decode(errors="replace")

    def _say(self, line: str) -> None:
        # A call's id and input are the model's: on a terminal, shown inert.
        self.err.write(shown_on(self.err)(line) + "\n")
        self.err.flush()


async def _read_when_ready(fd: int) -> bytes:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    try:
        return os.read(fd, 4096)
    except OSError:  # EIO: the terminal went away
        return b""


async def _run_editor(editor: str, input: JsonValue) -> str | None:
    """Open `input` as JSON in `editor`; return the saved text, or None if the editor failed."""
    with tempfile.TemporaryDirectory(prefix="neuron-turn-") as directory:
        path = Path(directory) / "input.json"
        path.write_text(json.dumps(input, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        try:
            child = await asyncio.create_subprocess_exec(*shlex.split(editor), str(path))
            if await child.wait() != 0:
                return None
            # An editor that removed the file or saved other bytes than UTF-8 failed too.
            return path.read_text(encoding="utf-8")
        except (OSError, ValueError):  # ValueError: unbalanced quotes, text not UTF-8
            return None


def _json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_value(text: str) -> JsonValue:
    try:
        value: JsonValue = json_value(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    return value


class _Approve(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        ns.decisions = [*ns.decisions, Decision.approve(value)]


class _Deny(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        ns.decisions = [*ns.decisions, Decision.deny(value, "")]


class _EditInput(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        last = ns.decisions[-1] if ns.decisions else None
        if last is None or last.decision != "approve" or last.input is not None:
            parser.error("--input belongs right after the --approve ID whose input it replaces")
        ns.decisions = [*ns.decisions[:-1], last.model_copy(update={"input": value})]


class _Reason(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        last = ns.decisions[-1] if ns.decisions else None
        if last is None or last.decision != "deny" or last.reason:
            parser.error("--reason belongs right after the --deny ID it explains")
        ns.decisions = [*ns.decisions[:-1], last.model_copy(update={"reason": value})]


class _Answer(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        id, text = value
        try:
            output = _json_value(text)
        except argparse.ArgumentTypeError as exc:
            parser.error(
                f"--answer {id}: the result is {exc} (a text goes in quotes: '\"{text}\"')"
            )
        ns.decisions = [*ns.decisions, Decision.answer(id, output)]


class _Failed(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        last = ns.decisions[-1] if ns.decisions else None
        if last is None or last.decision != "answer" or last.is_error:
            parser.error("--failed belongs right after the --answer ID JSON it marks")
        ns.decisions = [*ns.decisions[:-1], last.model_copy(update={"is_error": True})]


class _Always(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, _: Any = None
    ) -> None:
        last = ns.decisions[-1] if ns.decisions else None
        if last is None or last.always or last.decision == "answer":
            parser.error("--always belongs after the --approve ID or --deny ID it extends")
        ns.decisions = [*ns.decisions[:-1], last.model_copy(update={"always": True})]
