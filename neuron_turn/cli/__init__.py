"""The `neuron-turn` command (also `python -m neuron_turn`): list plugins, run one turn.

Errors a user can fix (a missing API key, an unknown provider, a provider
failure) end with one line on stderr and an exit code of their own, listed
in `--help`; anything else is a bug and keeps its traceback.

This subpackage is the command line and nothing else: the parser and the
commands here, running a turn (`_run`), error classes and exit codes
(`_errors`), sessions and history (`_sessions`), the plugin listing
(`_listing`), the progress lines on stderr (`progress`, `_waiting`), where the
prompt comes from (`_prompt`), provider options and tool checks
(`_turn_options`), how a turn's end is reported (`_outcome`) and the
interactive `chat`. It sits on top:
it may import the plugin system (`neuron_turn.plugins`) and the loop
(`neuron_turn.loop`); nothing in `neuron_turn` imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import pathlib
import shlex
import sys
import urllib.parse
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final, NoReturn, TextIO, cast

from moneyed import Money
from pydantic import JsonValue
from pydantic_core import PydanticCustomError

from layer0 import (
    EffectPolicy,
    Layer0Error,
    StateReader,
    TurnConfig,
    TurnOutput,
)
from layer0.money import parse_cost
from neuron_tool import ToolError

from ..loop._convert import HistoryFormatError
from ..loop._exit_text import exit_reason_text
from ..loop.hosted_tools import (
    HOSTED_TOOL_NAMES,
    HostedMCP,
    HostedTool,
    UnsupportedHostedToolError,
    hosted_tool_from_json,
)
from ..loop.provider_errors import ProviderError
from ..loop.sampling import InvalidSamplingError, Sampling
from ..loop.thinking import THINKING_EFFORTS, Thinking
from ..plugins import PluginManager, get_plugin_manager
from ..plugins.errors import PluginError
from ..plugins.warnings import NeuronWarning, PluginLoadWarning
from ._approve import (
    Prompter,
    add_approve_tool_argument,
    add_resume_parser,
    awaiting,
    kept_part_hint,
    print_resume_hint,
)
from ._attachments import read_attachments
from ._closed_output import output_may_close
from ._closing import close_resource
from ._elicitation import TerminalQuestions
from ._errors import (
    EXIT_ERROR,
    EXIT_IMAGES,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_STATE,
    EXIT_TERMINATED,
    EXIT_UNSAVED,
    EXIT_USAGE,
    UsageError,
    classify,
    epilog,
    stop_notes,
)
from ._fallback import add_fallback_arguments, fallback_usage_error, retry_options
from ._forget import add_forget_parser
from ._fork import add_fork_parser
from ._hosted_token import ENV_KEY, EnvTokenMCP, with_env_token
from ._images import ImageSaveError, image_directory, images_note, save_images
from ._listing import listing_json, listing_text
from ._numbers import whole_number
from ._outcome import json_result, stop_note, turn_id_of
from ._process_end import end_process
from ._prompt import add_prompt_arguments, read_prompt, utf8_text
from ._reading import TooDeepJSONError, TooLargeError, json_value, read_bounded
from ._restore import add_restore_parser
from ._revoke import add_revoke_parser
from ._sessions import (
    SessionApprovals,
    SessionEntry,
    approvals_in,
    continue_hint,
    history_text,
    list_sessions,
    read_history,
    session_id,
    session_to_use,
)
from ._show import add_show_parser
from ._state_option import add_state_argument, open_state_store, shown_state
from ._termination import stopped_by_sigterm_as_by_ctrl_c, terminated
from ._turn_options import add_option_argument, check_allowed_tools
from ._ui import add_ui_parser
from ._unsaved import unsaved_line, unsaved_of
from ._visible import json_shown_on, one_line, shown_on
from ._waiting import WaitingLine, on_terminal, watched

if TYPE_CHECKING:
    from ..loop.approval import PendingCall
    from ._run import Orchestration, RunResult, TurnSpec
    from ._stream_output import TextPrinter

__all__ = ["console_main", "main", "summary"]

PROG: Final = "neuron-turn"
_USAGE_FLAGS: Final = {
    "tool_calls": "most tool calls the turn runs; an answer asking for more runs none",
    "input_tokens": "most input tokens, its model calls together",
    "output_tokens": "most output tokens, its model calls together",
    "total_tokens": "most input and output tokens together",
}
"""The usage limits `run` takes as `--max-*` options (`neuron_turn.UsageLimits`' fields)."""
_MOST_TURNS: Final = 2**32 - 1
"""The most `--max-turns` a `TurnConfig` holds (a u32, as on the wire)."""
_MOST_SECONDS: Final = 10**15
"""The most `--max-duration`: its milliseconds within the u64 a `TurnConfig` holds."""
_OUTPUT_MODES: Final = ("native", "tool", "prompted")
"""`--output-mode`'s choices: `neuron_turn.OutputMode`'s values, spelled here so that parsing
the command line imports no loop."""


def console_main() -> NoReturn:
    """The `neuron-turn` command: run `main` on `sys.argv` and end the process with its code.

    Apart from `main` so that tests and embedding code can call `main` in
    their own process; this one ends the process (see `cli/_process_end.py`).
    """
    end_process(main())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); return the exit code.

    Output whose reader went away (`| head -1`) is dropped and the command
    goes on to its end: a turn streaming its answer still completes and is kept.
    """
    with output_may_close(), stopped_by_sigterm_as_by_ctrl_c():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            code: int = args.handler(args)
        except KeyboardInterrupt as exc:
            line = "terminated (SIGTERM)" if terminated() else "interrupted"
            if args.handler is _run_command:
                line += kept_part_hint(args, _add_run_options, exc)
            _error(line + stop_notes(exc))
            return EXIT_TERMINATED if terminated() else EXIT_INTERRUPTED
        except UsageError as exc:
            _error(str(exc))
            return EXIT_USAGE
        except (PluginError, ProviderError, Layer0Error, ToolError) as exc:
            unsaved = unsaved_of(exc)
            if unsaved is not None:
                state = shown_state(getattr(args, "state", None))
                kept, line, last_resort = unsaved_line(unsaved, exc, state=state)
                output, session = unsaved.output, unsaved.session
                if getattr(args, "json", False) and output is not None and session is not None:
                    # The answer a script reads, as a run that kept it prints it.
                    print(json_shown_on(sys.stdout)(json_result(output, session)))
                _error(line)
                if last_resort is not None:
                    print(json_shown_on(sys.stderr)(last_resort), file=sys.stderr)
                return EXIT_UNSAVED if kept else EXIT_STATE
            code, line = classify(exc, model=getattr(args, "model", None))
            if args.handler is _run_command:
                line += kept_part_hint(args, _add_run_options, exc)
            _error(line)
        if terminated() and code == EXIT_OK:  # a chat told to end ends as Ctrl-D ends it
            return EXIT_TERMINATED
        return code


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error here."""

    def error(self, message: str) -> NoReturn:
        line = f"{self.prog}: error: {' '.join(message.split())} (usage: {self.prog} --help)"
        self.exit(EXIT_USAGE, line + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Run agent turns with NeuronTurn, built from installed plugins.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Each subcommand's parser is a `_Parser` too (argparse uses the parent's class).
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(title="commands", required=True, metavar="COMMAND"),
    )
    listing = commands.add_parser(
        "plugins",
        help="list installed plugins, what they registered, and the ones that failed",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--json", action="store_true", help="print JSON for machines")
    listing.set_defaults(handler=_plugins_command)
    _add_run_parser(commands)
    _add_worker_parser(commands)
    _add_chat_parser(commands)
    _add_session_parsers(commands)
    add_show_parser(commands)
    add_revoke_parser(commands)
    add_restore_parser(commands)
    add_fork_parser(commands)
    add_forget_parser(commands)
    add_ui_parser(commands)
    return parser


def _add_run_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="run one turn and print the answer",
        description="Run one turn on PROMPT and print the answer on stdout as it arrives, "
        "and a one-line summary on stderr. Model and tool calls are shown on stderr as they "
        "happen (each with its own tokens, cost and duration) when stderr is a terminal, or "
        "with --verbose. --jsonl prints every event as a JSON line instead.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_prompt_arguments(run)
    run.add_argument(
        "--session",
        type=session_to_use,
        metavar="ID",
        help="continue this conversation (default: a new one)",
    )
    _add_run_options(run)
    run.set_defaults(handler=_run_command)
    add_resume_parser(commands, _add_run_options, _run_command, epilog())


def _add_run_options(run: argparse.ArgumentParser) -> None:
    """The options of `run` after its prompt and session (`resume` takes them too)."""
    _add_turn_arguments(run)
    _add_limit_arguments(run)
    _add_allow_tool_argument(run)
    _add_stop_argument(run)
    run.add_argument(
        "--fail-if-changed",
        action="store_true",
        help="fail (nothing recorded) instead of appending this turn to the session when "
        "another run changed the session while this one ran",
    )
    _add_orchestration_arguments(run, worker=False)
    add_fallback_arguments(run)
    run.add_argument(
        "--pickup-timeout",
        type=_positive(float),
        metavar="SECONDS",
        help="with a remote orchestrator: how long to wait for a worker (default: 30)",
    )
    run.add_argument(
        "--environment",
        metavar="NAME",
        help="run the turn in this environment: process (a child process) or sandbox "
        "(bubblewrap, no network), from plugin neuron-env-sandbox; default: this process",
    )
    run.add_argument(
        "--output-schema",
        type=_schema_file,
        action="append",
        metavar="FILE",
        help="a JSON Schema file the answer must match; prints the validated JSON; repeat it "
        "to let the model choose between them (each kind named by its file's name up to the "
        'first dot): prints {"kind": ..., "data": ...}',
    )
    run.add_argument(
        "--output-type",
        metavar="NAME",
        help="an output type a plugin registered (`neuron-turn plugins` lists them) the answer "
        'must be; prints the validated JSON (a choice: {"kind": ..., "data": ...})',
    )
    run.add_argument(
        "--output-mode",
        choices=_OUTPUT_MODES,
        help="with --output-schema, how the model is asked: native (the provider's JSON-schema "
        "output), tool (a final-answer tool) or prompted (the schema in the system prompt); "
        "default: the provider's choice",
    )
    run.add_argument(
        "--strict-output",
        type=_on_off,
        metavar="on|off",
        help="with --output-schema: on makes the answer strict (OpenAI's strict native output, "
        "a strict final-answer tool; refused over a provider without strict mode), off never; "
        "default: strict where the provider infers it and the schema fits",
    )
    run.add_argument(
        "--output-text",
        action="store_true",
        help="with --output-schema or --output-type: a plain text answer is an answer too; prints "
        '{"kind": "text", "data": ...} for text, the schema\'s kind (its file\'s name up to the '
        "first dot) for JSON",
    )
    run.add_argument(
        "--tool-choice",
        type=_tool_choice,
        metavar="CHOICE",
        help="auto, none, required, or a tool's name to force that tool (first call only)",
    )
    _add_trace_argument(run, "the run")
    _add_save_images_argument(run)
    shape = run.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print only the TurnOutput JSON")
    shape.add_argument(
        "--jsonl",
        action="store_true",
        help="print every event of the turn as a JSON line as it happens, the output last",
    )


def _add_save_images_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--save-images",
        type=image_directory,
        metavar="DIR",
        help="write the images an answer holds (--hosted-tool image_generation) to DIR",
    )


def _add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The limits of a turn: model calls, money, time, and the usage limits (`run`, `chat`)."""
    parser.add_argument(
        "--max-turns", type=_positive(int, most=_MOST_TURNS), metavar="N", help="most model calls"
    )
    parser.add_argument(
        "--max-cost", type=_cost, metavar="USD", help="most USD to spend, e.g. 0.05"
    )
    parser.add_argument(
        "--max-duration",
        type=_positive(float, most=_MOST_SECONDS),
        metavar="SECONDS",
        help="wall-clock limit",
    )
    for limit, what in _USAGE_FLAGS.items():
        flag = "--max-" + limit.replace("_", "-")
        parser.add_argument(flag, type=whole_number, metavar="N", help=what)


def _add_stop_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stop-at-tool",
        action="append",
        metavar="NAME",
        help="end the turn with this tool's result once a call of it succeeds, no model "
        "call after it (repeat)",
    )


def _add_trace_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--trace",
        action="store_true",
        help=f"record OpenTelemetry spans of {what} (plugin neuron-tracing-otel; NEURON_OTEL=1)",
    )


def _add_allow_tool_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-tool",
        action="append",
        metavar="NAME",
        help="allow only these tools (repeat; default: every tool the turn has)",
    )


def _add_worker_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="host the turn for a distributed orchestrator (Temporal) until Ctrl-C",
        description="Build the turn as `run` would (same --model, --tool, --system, --mcp) "
        "and host it as agent 'main' for the orchestrator, so `neuron-turn run "
        "--orchestrator ...` on any machine can dispatch to it.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_turn_arguments(worker)
    _add_orchestration_arguments(worker, worker=True)
    # The turns run here, not in `run`'s process: their model and tool calls are traced here.
    _add_trace_argument(worker, "the turns this worker runs")
    worker.set_defaults(handler=_worker_command)


def _add_chat_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = commands.add_parser(
        "chat",
        help="talk to the model: a conversation on one session, answer by answer",
        description="Each line is one turn on the session (as `run --session` would run it), "
        "its answer streamed. /help lists the commands (/tools, /cost, /exit); Ctrl-D leaves, "
        "Ctrl-C cancels the answer on its way and keeps the conversation as it was.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chat.add_argument(
        "--session", type=session_to_use, metavar="ID", help="continue this conversation"
    )
    _add_save_images_argument(chat)
    _add_limit_arguments(chat)  # each answer's own
    _add_allow_tool_argument(chat)
    _add_stop_argument(chat)
    _add_turn_arguments(chat)
    add_state_argument(chat)
    chat.set_defaults(handler=_chat_command)


def _chat_command(args: argparse.Namespace) -> int:
    from .chat import chat

    check_allowed_tools(args.tool, args.allow_tool)
    config = _config(args)
    spec = replace(_turn_spec(args), progress=False)  # progress comes from the events
    session, path = args.session, args.state
    manager = get_plugin_manager()

    def paused(session: str, model: str, pending: Sequence[PendingCall]) -> int:
        return print_resume_hint(args, _add_run_options, session, model, pending, sys.stderr)

    return chat(
        manager,
        spec,
        session=session,
        state_path=path,
        config=config,
        metadata=_call_options(args),
        verbose=args.verbose,
        paused=paused,
        save_images=args.save_images,
    )


def _add_turn_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="P:M",
        help="e.g. anthropic:claude-haiku-4-5 (default: the first provider whose API key is "
        "set, else the embedded local model)",
    )
    add_option_argument(parser)
    parser.add_argument(
        "--system", default="", type=_unicode, metavar="TEXT", help="the system prompt"
    )
    parser.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="use this plugin tool"
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        type=_mcp_command,
        metavar="'CMD ARGS'",
        help="add the tools of this MCP server, started over stdio (repeat)",
    )
    parser.add_argument(
        "--mcp-url",
        action="append",
        default=[],
        type=_mcp_url,
        metavar="URL",
        help="add the tools of this Streamable HTTP MCP server (repeat)",
    )
    parser.add_argument(
        "--mcp-allow",
        action="append",
        default=[],
        metavar="NAME",
        help="offer only this tool of the MCP servers (repeat; the others are never offered)",
    )
    parser.add_argument(
        "--mcp-block",
        action="append",
        default=[],
        metavar="NAME",
        help="never offer this tool of the MCP servers (repeat; wins over --mcp-allow)",
    )
    parser.add_argument(
        "--mcp-token-env",
        metavar="VAR",
        help="send the --mcp-url servers the bearer token in this environment variable "
        "(as `serve_http` asks for; read from the environment so it is not in your shell history)",
    )
    parser.add_argument(
        "--mcp-sampling",
        action="store_true",
        help="let the MCP servers have this run's model write for them (MCP sampling): at "
        "most 4096 tokens a request and 100 requests, counted in the turn's tokens and cost",
    )
    parser.add_argument(
        "--grant",
        action="append",
        default=[],
        type=_grant,
        metavar="GRANT",
        help="let the model reach beyond this session's memory (repeat): global, "
        "session:<id>|*, workflow:<id>|*, agent:<workflow>/<agent>|*, custom:<name>|*, "
        "delegate[:<agent>], handoff[:<agent>], signal[:<workflow>], read:<scope> to read "
        "memory there (read:global, read:session:*, ...), or * for everything "
        "(default: only this session's memory)",
    )
    parser.add_argument(
        "--context",
        default="sliding_window",
        metavar="NAME",
        help="the context strategy: sliding_window (default), none, or one a plugin adds "
        "(clear_tool_results, summarize, tiered; see `neuron-turn plugins`)",
    )
    parser.add_argument(
        "--context-option",
        action="append",
        default=[],
        type=_context_option,
        metavar="KEY=VALUE",
        help="an option of the strategy, e.g. keep=5 or model=claude-haiku-4-5 "
        "(repeat; VALUE is read as JSON when it parses, else as text)",
    )
    parser.add_argument(
        "--context-limit",
        type=_positive(int),
        metavar="TOKENS",
        help="compact when a request would pass this many input tokens "
        "(default: the model's context window less room for the answer)",
    )
    parser.add_argument(
        "--hosted-tool",
        action="append",
        default=[],
        type=_hosted_tool,
        metavar="NAME|JSON",
        help="let the provider run this tool on its servers (repeat): web_search, web_fetch, "
        "code_execution (anthropic, google: all three; openai-responses: web_search, "
        "code_execution), image_generation (google), or one with limits as JSON, e.g. "
        """'{"name": "web_fetch", "max_uses": 3, "allowed_domains": ["docs.python.org"]}'; """
        "a remote MCP server as JSON with its label and url (anthropic, openai-responses), "
        "its token read from the environment variable authorization_env names, "
        "require_approval true or a list of its tools to be asked about",
    )
    parser.add_argument(
        "--thinking",
        type=_thinking,
        metavar="LEVEL",
        help="how much the model thinks before it answers, on any provider that takes it: "
        "on, off, minimal, low, medium, high or xhigh (default: the model's own)",
    )
    _add_sampling_arguments(parser)
    add_approve_tool_argument(parser)
    parser.add_argument("--verbose", action="store_true", help="show progress even when piped")


def _add_sampling_arguments(parser: argparse.ArgumentParser) -> None:
    """`--temperature`, `--top-p`, `--top-k`, `--seed` and `--stop`: how the model samples."""
    parser.add_argument(
        "--temperature", type=float, metavar="T", help="sampling temperature (default: the API's)"
    )
    parser.add_argument(
        "--top-p", type=float, metavar="P", help="nucleus sampling, above 0 and at most 1"
    )
    parser.add_argument(
        "--top-k", type=int, metavar="K", help="sample from the K most likely tokens only"
    )
    parser.add_argument(
        "--seed", type=int, metavar="N", help="ask for the same answer to the same request"
    )
    parser.add_argument(
        "--stop",
        action="append",
        default=[],
        type=_unicode,
        metavar="TEXT",
        help="end the answer where the model writes TEXT (repeat); a provider that does not "
        "take a setting refuses the run before any call",
    )


_SAMPLING_FLAGS: Final = {
    "top_p": "--top-p",
    "top_k": "--top-k",
    "seed": "--seed",
    "stop_sequences": "--stop",
}


def _sampling_flags(args: argparse.Namespace) -> Sampling | None:
    """The sampling flags as a `Sampling` (None: none given).

    Raises:
        UsageError: a value no API takes, naming the flag.
    """
    given = {
        "top_p": args.top_p,
        "top_k": args.top_k,
        "seed": args.seed,
        "stop_sequences": tuple(args.stop),
    }
    if all(value in (None, ()) for value in given.values()):
        return None
    try:
        return Sampling(**given)
    except InvalidSamplingError as exc:
        named = (flag for name, flag in _SAMPLING_FLAGS.items() if f" {name} " in str(exc))
        raise UsageError(f"{next(named, '--top-p/--top-k/--seed/--stop')}: {exc}") from None


def _add_orchestration_arguments(parser: argparse.ArgumentParser, *, worker: bool) -> None:
    parser.add_argument(
        "--orchestrator",
        default="temporal" if worker else "local",
        metavar="NAME",
        help="the orchestrator: local (this process) or temporal (a worker runs the turn)",
    )
    parser.add_argument(
        "--temporal-address",
        "--address",
        dest="address",
        metavar="HOST:PORT",
        help="the Temporal server (default: 127.0.0.1:7233)",
    )
    parser.add_argument(
        "--task-queue", metavar="NAME", help="the Temporal task queue (default: neuron-turn)"
    )
    parser.add_argument(
        "--payload-dir",
        metavar="DIR",
        help="keep Temporal payloads of 256 KiB and more (images, documents) in DIR, "
        "out of workflow histories; give the worker and every caller the same DIR",
    )
    add_state_argument(parser)


def _plugins_command(args: argparse.Namespace) -> int:
    with warnings.catch_warnings():
        # The listing shows every failure itself; a warning would say it twice.
        warnings.simplefilter("ignore", PluginLoadWarning)
        manager = get_plugin_manager()
    if args.json:
        print(json.dumps(listing_json(manager), indent=2))
    else:
        print(listing_text(manager))
    return EXIT_OK


def _run_command(args: argparse.Namespace) -> int:
    from ._run import RunRequest, run_turn  # the loop, imported only when a turn runs
    from ._stream_output import JsonLinesPrinter, TextPrinter
    from ._trace import load_traced

    problem = fallback_usage_error(args) or _output_usage_error(args)
    if problem is not None:
        _error(problem)
        return EXIT_USAGE
    if args.environment is not None and (
        args.orchestrator != "local" or args.mcp or args.mcp_url or args.option
    ):
        _error(
            "--environment works with the local orchestrator, plugin tools and the provider's "
            "default options only (MCP tools and remote workers live outside the environment)"
        )
        return EXIT_USAGE
    if args.mcp_token_env is not None and not os.environ.get(args.mcp_token_env):
        _error(f"--mcp-token-env: the environment variable {args.mcp_token_env} is not set")
        return EXIT_USAGE
    if args.environment is not None and any(isinstance(t, EnvTokenMCP) for t in args.hosted_tool):
        _error(
            "--environment: a remote MCP server's token (authorization_env) never goes into "
            "a sandbox's recipe; grant that server without --environment"
        )
        return EXIT_USAGE

    check_allowed_tools(args.tool, args.allow_tool)
    printer = TextPrinter(sys.stdout, sys.stderr, progress=args.verbose or sys.stderr.isatty())
    same = on_terminal(sys.stdout) and on_terminal(sys.stderr)
    waiting = WaitingLine(
        sys.stderr,
        terminal=on_terminal(sys.stderr),
        may_draw=lambda: not (same and printer.mid_line),
    )
    decide = _prompter(args, printer, waiting)
    # A person at the terminal answers the MCP servers' questions too.
    questions = None if decide is None else TerminalQuestions(decide)
    request = RunRequest(
        prompt=_prompt_of(args),
        attachments=read_attachments(getattr(args, "attach", ())),  # `resume` attaches nothing
        session=args.session,
        config=_config(args),
        # Progress comes from the events.
        turn=replace(_turn_spec(args), progress=False, questions=questions),
        orchestration=_orchestration(args),
        metadata=_call_options(args),
        fallbacks=tuple(args.fallback),
        retry=retry_options(args.retries),
        decisions=getattr(args, "decisions", None),  # only `resume` has them
        decide=decide,
        stopping=lambda: waiting.expect("the worker to stop the turn"),
    )
    manager = load_traced(get_plugin_manager) if args.trace else get_plugin_manager()
    unknown = _unknown_output_type(args, manager)
    if unknown is not None:
        _error(unknown)
        return EXIT_USAGE
    if args.json:
        result = asyncio.run(run_turn(manager, request))
        print(json_shown_on(sys.stdout)(json_result(result.output, result.session)))
        return _saved_images(args, result) or _paused(args, result) or EXIT_OK
    if args.output_schema is not None or args.output_type is not None:
        # The validated JSON alone on stdout: nothing streams before it.
        result = asyncio.run(run_turn(manager, request))
        asked = (
            "--output-schema" if args.output_type is None else f"--output-type {args.output_type}"
        )
        return _paused(args, result) or _print_typed(result.output, result.session, asked)
    if args.jsonl:
        result = asyncio.run(run_turn(manager, request, JsonLinesPrinter(sys.stdout)))
        return _paused(args, result) or EXIT_OK
    waiting.show_now()
    try:
        with waiting.owning_stderr():
            result = asyncio.run(
                watched(waiting, run_turn(manager, request, waiting.wrap(printer)))
            )
    finally:
        printer.end_line()  # an error after some text starts on a line of its own
    printer.finish(result.output)
    print(summary(result.output), file=sys.stderr)
    turn = turn_id_of(result.output)
    if args.verbose and turn is not None:
        print(f"turn {turn} (neuron-turn show {turn})", file=sys.stderr)
    paused = _saved_images(args, result) or _paused(args, result)
    if paused:
        return paused
    print(continue_hint(result.session), file=sys.stderr)
    note = stop_note(result.output, result.session)
    if note is not None:  # it may quote a hook's or a guardrail's words
        print(shown_on(sys.stderr)(f"{PROG}: {note}"), file=sys.stderr)
    return EXIT_OK


def _saved_images(args: argparse.Namespace, result: RunResult) -> int:
    """0 once the answer's images are written (`--save-images`) or named; else the exit code."""
    output = result.output
    if args.save_images is None:
        note = images_note(output)
        if note is not None:
            print(f"{PROG}: {note}", file=sys.stderr)
        return 0
    stem = turn_id_of(output) or uuid.uuid4().hex
    try:
        lines = save_images(output, args.save_images, stem)
    except ImageSaveError as exc:
        _error(
            f"--save-images: {exc}; the turn ran, and the session's history keeps its images "
            f"(neuron-turn history {result.session} --json)"
        )
        return EXIT_IMAGES
    for line in lines:
        print(shown_on(sys.stderr)(line), file=sys.stderr)  # a URL is the model's
    return 0


def _prompter(
    args: argparse.Namespace, printer: TextPrinter, waiting: WaitingLine
) -> Prompter | None:
    """Who asks when the turn pauses: a person at the terminal, if there is one."""
    if args.json or args.jsonl or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    return Prompter(sys.stdin, sys.stderr, before=lambda: _asking(printer, waiting))


def _asking(printer: TextPrinter, waiting: WaitingLine) -> None:
    """Make room for a question: the answer's line ends and the waiting line holds off."""
    printer.end_line()
    waiting.hold()


def _paused(args: argparse.Namespace, result: RunResult) -> int:
    """0, or (for a turn paused for approval) the exit code, after saying how to resume."""
    pending = awaiting(result.output)
    if not pending:
        return 0
    return print_resume_hint(
        args, _add_run_options, result.session, result.model, pending, sys.stderr
    )


def _prompt_of(args: argparse.Namespace) -> str:
    if not hasattr(args, "prompt_file"):  # `resume`: the paused turn has its prompt already
        return str(args.prompt)
    return read_prompt(args.prompt, args.prompt_file, sys.stdin)


def _print_typed(output: TurnOutput, session: str, asked: str) -> int:
    """Print the validated JSON; without one, say so and exit as for an unusable answer."""
    from ..loop.output import OutputMissingError, output_kind, output_value

    try:
        value = output_value(output)
        kind = output_kind(output)
    except OutputMissingError:
        print(summary(output), file=sys.stderr)
        _error(
            f"the turn ended without an answer matching {asked} "
            f"(exit reason: {exit_reason_text(output.exit_reason)})"
        )
        return EXIT_MODEL
    shown = value if kind is None else {"kind": kind, "data": value}
    print(json_shown_on(sys.stdout)(json.dumps(shown, ensure_ascii=False)))
    print(summary(output), file=sys.stderr)
    print(continue_hint(session), file=sys.stderr)
    return EXIT_OK


def _call_options(args: argparse.Namespace) -> JsonValue:
    """The turn input's metadata: the options TurnConfig has no field for (see CALL_OPTIONS_KEY)."""
    options: dict[str, JsonValue] = {}
    if getattr(args, "output_schema", None) is not None:  # `chat` has no typed answers
        if len(args.output_schema) == 1 and not args.output_text:
            ((path, schema),) = args.output_schema
            options["output_schema"] = schema
            options["output_name"] = path
        else:  # a choice: between the files, or a file and text, each answer naming its kind
            options["output_schema"] = [
                {"name": _kind_of_file(path), "schema": schema}
                for path, schema in args.output_schema
            ]
        if args.output_text:
            options["output_text"] = True
        if args.output_mode is not None:
            options["output_mode"] = args.output_mode
        if args.strict_output is not None:
            options["output_strict"] = args.strict_output
    if getattr(args, "output_type", None) is not None:
        options["output_type"] = args.output_type
        if args.output_text:
            options["output_text"] = True
    if getattr(args, "tool_choice", None) is not None:
        options["tool_choice"] = args.tool_choice
    given = {limit: getattr(args, f"max_{limit}") for limit in _USAGE_FLAGS}
    limits: dict[str, JsonValue] = {k: v for k, v in given.items() if v is not None}
    if limits:
        options["usage_limits"] = limits
    if args.stop_at_tool:
        options["stop_at_tools"] = list(args.stop_at_tool)
    return {"neuron_turn": options} if options else None


def _schema_file(path: str) -> tuple[str, dict[str, JsonValue]]:
    from ..loop.output import OutputSpec, OutputTypeError

    try:
        with open(path, "rb") as file:
            schema = json_value(read_bounded(file).decode("utf-8"))
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {path!r}: {exc.strerror}") from None
    except TooLargeError as exc:
        raise argparse.ArgumentTypeError(f"{path!r} holds {exc}; no schema is that large") from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{path!r} is not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise argparse.ArgumentTypeError(f"{path!r} holds no JSON Schema object")
    try:
        spec = OutputSpec.json_schema(schema, name=_stem(path))
    except OutputTypeError as exc:
        raise argparse.ArgumentTypeError(f"{path!r}: {exc}") from None
    return spec.name, schema


def _stem(path: str) -> str:
    return pathlib.PurePath(path).name.split(".", 1)[0] or "output"


def _tool_choice(text: str) -> str:
    from ..loop.tool_choice import ToolChoice

    try:
        return str(ToolChoice.parse(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _worker_command(args: argparse.Namespace) -> int:
    from ._run import serve_worker  # the loop, imported only when a turn runs
    from ._trace import load_traced

    manager = load_traced(get_plugin_manager) if args.trace else get_plugin_manager()
    asyncio.run(serve_worker(manager, _turn_spec(args), _orchestration(args)))
    return EXIT_OK


def _turn_spec(args: argparse.Namespace) -> TurnSpec:
    from ._run import TurnSpec

    return TurnSpec(
        model=args.model,
        system=args.system,
        tools=args.tool,
        mcp_commands=args.mcp,
        mcp_urls=args.mcp_url,
        mcp_allow=tuple(args.mcp_allow),
        mcp_block=tuple(args.mcp_block),
        mcp_token_env=args.mcp_token_env,
        mcp_sampling=args.mcp_sampling,
        progress=args.verbose or sys.stderr.isatty(),
        grants=tuple(args.grant),
        approve_tools=tuple(args.approve_tool),
        context=args.context,
        context_options=dict(args.context_option),
        context_limit=args.context_limit,
        provider_options=dict(args.option),
        hosted_tools=_hosted_tools(args.hosted_tool),
        thinking=args.thinking,
        temperature=_temperature(args.temperature),
        sampling=_sampling_flags(args),
    )


def _temperature(value: float | None) -> float | None:
    """`--temperature`, a finite number 0 or more.

    Raises:
        UsageError: it is not.
    """
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise UsageError(f"--temperature must be a number 0 or more; got {value}")
    return value


def _hosted_tools(given: Sequence[HostedTool]) -> tuple[HostedTool, ...]:
    """The `--hosted-tool`s, each once; one kind given with two sets of limits is refused.

    MCP servers are told apart by their label (`mcp docs`).
    """
    tools = tuple(dict.fromkeys(given))
    names = [f"mcp {tool.label}" if isinstance(tool, HostedMCP) else tool.name for tool in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(
            f"--hosted-tool: {', '.join(twice)} given twice with different limits; give it once"
        )
    return tools


def _orchestration(args: argparse.Namespace) -> Orchestration:
    from ._run import Orchestration

    return Orchestration(
        name=args.orchestrator,
        address=args.address,
        task_queue=args.task_queue,
        payload_dir=args.payload_dir,
        state_path=args.state,
        pickup_timeout=getattr(args, "pickup_timeout", None),
        environment=getattr(args, "environment", None),
    )


def _context_option(text: str) -> tuple[str, object]:
    """Read `KEY=VALUE`: VALUE as JSON when it parses (5, 0.5, true), else as text."""
    key, sep, raw = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE with KEY a Python name, e.g. keep=5; got {text!r}"
        )
    try:
        value: object = json_value(raw)
    except TooDeepJSONError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None
    except json.JSONDecodeError:
        value = raw
    return key, value


def _add_session_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sessions = commands.add_parser("sessions", help="list the conversations `run` kept")
    add_state_argument(sessions)
    sessions.add_argument("--json", action="store_true", help="print JSON for machines")
    sessions.set_defaults(handler=_sessions_command)
    history = commands.add_parser("history", help="print one conversation")
    history.add_argument("session", type=session_id, metavar="ID", help="the session id")
    add_state_argument(history)
    history.add_argument("--json", action="store_true", help="print the stored JSON")
    history.set_defaults(handler=_history_command)


def _sessions_command(args: argparse.Namespace) -> int:
    async def read() -> list[tuple[SessionEntry, SessionApprovals]]:
        store = _read_only_store(args)
        try:
            entries = await list_sessions(store)
            return [(entry, await approvals_in(store, entry.session)) for entry in entries]
        finally:
            await close_resource(store)

    listed = asyncio.run(read())
    if args.json:
        shown = [{**entry.as_json(), **approvals.as_json()} for entry, approvals in listed]
        print(json.dumps(shown, indent=2))
    elif not listed:
        print("no sessions yet; start one with: neuron-turn run PROMPT")
    for entry, approvals in [] if args.json else listed:
        line = (
            f"{one_line(entry.session)}  {entry.updated}  {entry.runs:>3} run(s)  "
            f"{approvals.marks()}{one_line(entry.title)}"
        )
        print(shown_on(sys.stdout)(line))
    return EXIT_OK


def _history_command(args: argparse.Namespace) -> int:
    async def read() -> JsonValue | None:
        store = _read_only_store(args)
        try:
            return await read_history(store, args.session)
        finally:
            await close_resource(store)

    history = asyncio.run(read())
    if history is None:
        _error(f"no session {args.session!r}; `neuron-turn sessions` lists them")
        return EXIT_NOT_FOUND
    if args.json:
        print(json_shown_on(sys.stdout)(json.dumps(history, indent=2, ensure_ascii=False)))
        return EXIT_OK
    try:
        text = history_text(history)
    except HistoryFormatError as exc:
        _error(
            f"the history of session {args.session!r} does not parse, {exc}; "
            f"`neuron-turn history {args.session} --json` prints it as stored"
        )
        return EXIT_ERROR
    print(shown_on(sys.stdout)(text))
    return EXIT_OK


def _read_only_store(args: argparse.Namespace) -> StateReader:
    # Listing needs read access only: the file is neither written nor created.
    store: StateReader = open_state_store(args.state, read_only=True)
    return store


def _config(args: argparse.Namespace) -> TurnConfig:
    seconds: float | None = args.max_duration
    return TurnConfig(
        max_turns=args.max_turns,
        max_cost=args.max_cost,
        max_duration=None if seconds is None else max(1, round(seconds * 1000)),
        allowed_tools=args.allow_tool,
        effect_policy=EffectPolicy(grants=tuple(args.grant)) if args.grant else None,
        # `chat` has no --fail-if-changed: it is the session's one writer while it runs.
        session_conflict="fail" if getattr(args, "fail_if_changed", False) else None,
    )


def summary(output: TurnOutput) -> str:
    """Return the one-line summary: exit reason, turns, tokens, cost and duration."""
    meta = output.metadata
    reason = exit_reason_text(output.exit_reason)
    turns = f"{meta.turns_used} turn{'' if meta.turns_used == 1 else 's'}"
    tokens = f"{meta.tokens_in} tokens in / {meta.tokens_out} out"
    return f"{reason}, {turns}, {tokens}, ${meta.cost.amount:.4f}, {meta.duration / 1000:.1f}s"


def _positive(
    kind: Callable[[str], int | float], *, most: int | None = None
) -> Callable[[str], int | float]:
    """A number more than 0 and finite (`nan`, `inf` are not), at `most` when given.

    `most` keeps it within the field it fills (a `TurnConfig`'s u32 turns, its u64
    milliseconds): more would fail building it, after the command started.
    """

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        # An int is finite whatever its size (math.isfinite overflows on a long one).
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number; got {text}")
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0; got {text}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most}; got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _unicode(text: str) -> str:
    """Text sent to the model (`--system`, `--stop`): bytes that are not UTF-8 are refused."""
    try:
        return utf8_text(text, "it")
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _on_off(text: str) -> bool:
    """`--strict-output`: on or off."""
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"choose from on, off; got {text!r}")
    return text == "on"


def _output_usage_error(args: argparse.Namespace) -> str | None:
    """Why the typed answer's options cannot be used, or None.

    `--output-mode` and `--strict-output` shape a typed answer, so they need
    `--output-schema`; schema files of one kind could not be told apart.
    """
    flags = (
        ("--output-mode", args.output_mode),
        ("--strict-output", args.strict_output),
        ("--output-text", args.output_text or None),
    )
    given = [flag for flag, value in flags if value is not None]
    if args.output_type is not None:
        return _named_output_error(args, given)
    if args.output_schema is not None:
        kinds = [_kind_of_file(path) for path, _ in args.output_schema]
        twice = sorted({kind for kind in kinds if kinds.count(kind) > 1})
        if twice:
            return (
                f"--output-schema: two files name the kind {twice[0]!r} (a file's name up to "
                "its first dot); rename one"
            )
        return _choice_error(args.output_schema)
    if not given:
        return None
    also = " or --output-type NAME" if given == ["--output-text"] else ""
    return f"{' and '.join(given)} shape a typed answer; give --output-schema FILE{also} too"


def _unknown_output_type(args: argparse.Namespace, manager: PluginManager) -> str | None:
    """Why `--output-type NAME` names no output type the plugins here offer, or None.

    Only for a turn run here: a remote worker has plugins of its own and answers for them.
    """
    if args.output_type is None or args.orchestrator != "local":
        return None
    try:
        manager.output_type_named(args.output_type)
    except PluginError as exc:
        return f"--output-type: {exc}"
    return None


def _named_output_error(args: argparse.Namespace, given: list[str]) -> str | None:
    """Why `--output-type NAME` cannot be used with the other flags given, or None."""
    if args.output_schema is not None:
        return "--output-type and --output-schema both give the answer's type; give one"
    fixed = [flag for flag in given if flag != "--output-text"]
    if fixed:
        return (
            f"{' and '.join(fixed)} cannot shape --output-type {args.output_type}: a named "
            "output type keeps the mode and strictness it was registered with"
        )
    return None


def _choice_error(files: list[tuple[str, dict[str, JsonValue]]]) -> str | None:
    """Why schema files cannot make a choice as the turn would make it, or None.

    Checked here, before any call, by the turn's own rules: kinds whose final-answer
    tools' names are one once cut to 64 characters, `$defs` that disagree, a root that
    is no object.
    """
    if len(files) < 2:
        return None
    from ..loop.output import OutputSpec, OutputTypeError

    schemas = {_kind_of_file(path): schema for path, schema in files}
    try:
        OutputSpec.json_schema_choice(schemas)
    except OutputTypeError as exc:
        return f"--output-schema: {exc}"
    return None


def _kind_of_file(path: str) -> str:
    """The kind a choice's schema file names: its file name up to the first dot."""
    return os.path.basename(path).split(".", 1)[0] or "output"


def _thinking(text: str) -> Thinking:
    """`--thinking`: on, off, or an effort."""
    words: dict[str, Thinking] = {"on": True, "off": False}
    words.update((effort, effort) for effort in THINKING_EFFORTS)
    if text not in words:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(words)}; got {text!r}")
    return words[text]


def _hosted_tool(text: str) -> HostedTool:
    """`--hosted-tool`: a hosted tool's name, or its JSON with limits."""
    if not text.lstrip().startswith("{") and text not in HOSTED_TOOL_NAMES:
        known = ", ".join(HOSTED_TOOL_NAMES)
        raise argparse.ArgumentTypeError(f"unknown hosted tool {text!r} (choose from {known})")
    try:
        data = json_value(text) if text.lstrip().startswith("{") else {"name": text}
        if isinstance(data, dict) and ENV_KEY in data:
            variable = data.pop(ENV_KEY)
            return with_env_token(hosted_tool_from_json(data), variable)
        return hosted_tool_from_json(data)
    except (json.JSONDecodeError, TooDeepJSONError) as exc:
        raise argparse.ArgumentTypeError(f"not a JSON object: {exc}") from None
    except UnsupportedHostedToolError as exc:
        # `mcp` alone names no server: the error says what to give.
        raise argparse.ArgumentTypeError(str(exc)) from None


def _grant(text: str) -> str:
    try:
        EffectPolicy.of([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _cost(text: str) -> Money:
    # Read as the wire reads a cost, so `--max-cost` holds what a TurnConfig can.
    try:
        cost = parse_cost(text)
    except PydanticCustomError as exc:
        raise argparse.ArgumentTypeError(f"not a USD amount: {exc.message()}") from None
    if cost.amount < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more; got {text}")
    return cost


def _mcp_command(text: str) -> str:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into words: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError(
            "empty; give the server's command line, e.g. 'uvx mcp-server-time'"
        )
    return text


def _mcp_url(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"not an http(s) URL: {text!r} (e.g. http://127.0.0.1:8000/mcp)"
        )
    return text


def _error(line: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    # An error may quote a model's or a server's words: on a terminal, shown inert.
    print(shown_on(stream)(f"{PROG}: error: {' '.join(line.split())}"), file=stream)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    # Our own warnings are for users: one line, no source location.
    if issubclass(category, NeuronWarning):
        print(f"{PROG}: warning: {message}", file=file or sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr)
