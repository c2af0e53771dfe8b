"""The command line's exit codes, and the one line it prints for each error a user can fix."""

from __future__ import annotations

import asyncio
import re
import textwrap
from collections.abc import Iterator
from typing import Final, TypeVar

from layer0 import (
    EnvError,
    HistoryConflict,
    Layer0Error,
    ModelError,
    NonRetryableError,
    OrchError,
    RetryableError,
    StateError,
)
from neuron_tool import MCPBridgeError, ToolError, ToolPrepareError, ToolSourceError

from ..loop.approval import ApprovalError, AwaitingApprovalError, NotAwaitingApprovalError
from ..loop.hosted_tools import UnsupportedHostedToolError
from ..loop.provider_errors import ProviderAuthenticationError, ProviderError
from ..loop.sampling import UnsupportedSamplingError
from ..loop.stop_tools import UnknownStopToolError
from ..loop.strict_tools import UnsupportedStrictOutputError, UnsupportedStrictToolsError
from ..loop.thinking import UnsupportedThinkingError
from ..plugins.errors import (
    InvalidModelError,
    NoProviderConfiguredError,
    PluginError,
    UnknownProviderError,
)

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_PLUGIN: Final = 3
EXIT_UNKNOWN_PROVIDER: Final = 4
EXIT_AUTH: Final = 5
EXIT_RETRYABLE: Final = 6
EXIT_REJECTED: Final = 7
EXIT_MODEL: Final = 8
EXIT_TOOL_SOURCE: Final = 9
EXIT_ORCHESTRATOR: Final = 10
EXIT_STATE: Final = 11
EXIT_CONFLICT: Final = 12
EXIT_ENVIRONMENT: Final = 13
EXIT_NOT_FOUND: Final = 14
EXIT_AWAITING_APPROVAL: Final = 15
EXIT_DECISIONS: Final = 16
EXIT_IMAGES: Final = 17
EXIT_UNSAVED: Final = 18
EXIT_INTERRUPTED: Final = 130
EXIT_TERMINATED: Final = 143

_CODES: Final = (
    (EXIT_OK, "success: the turn ran (whatever its exit reason) or the listing was printed"),
    (EXIT_ERROR, "another error reported by the turn (e.g. unreadable history)"),
    (EXIT_USAGE, "bad command-line usage"),
    (
        EXIT_PLUGIN,
        "a plugin problem: a load failure under NEURON_STRICT_PLUGINS=1, a name "
        "two plugins registered, a factory that failed, an unknown tool, a tool's "
        "prepare that failed",
    ),
    (EXIT_UNKNOWN_PROVIDER, "unknown provider, or a model not written '<provider>:<model>'"),
    (EXIT_AUTH, "missing or invalid API key"),
    (
        EXIT_RETRYABLE,
        "the provider failed in a way a retry may fix (rate limit, overload, network)",
    ),
    (EXIT_REJECTED, "the provider rejected the request (invalid request, unknown model)"),
    (EXIT_MODEL, "the model's answer could not be used (truncated, filtered, malformed)"),
    (
        EXIT_TOOL_SOURCE,
        "an MCP server given with --mcp / --mcp-url, or a tool source a plugin offers, could "
        "not be used",
    ),
    (
        EXIT_ORCHESTRATOR,
        "the orchestrator could not run the turn (no worker picked it up, server unreachable)",
    ),
    (
        EXIT_STATE,
        "the state file could not be used (corrupt, another program's, read-only, a "
        "directory, a newer version), or the state database (--state postgresql://...) "
        "could not be reached, refused the login or holds a newer schema; the message "
        "names the file or database and what to do",
    ),
    (
        EXIT_CONFLICT,
        "with --fail-if-changed: another run changed the session while this one ran; "
        "nothing was recorded, run again",
    ),
    (
        EXIT_ENVIRONMENT,
        "the environment (--environment) could not run the turn: it cannot enforce what was "
        "asked, its sandbox is missing, a limit was exceeded, or its process crashed",
    ),
    (
        EXIT_NOT_FOUND,
        "show: the turn, or the session's turns, are not in the state file; history: the "
        "session has no history; revoke: the "
        "session has no decision for good for a tool named; forget: nothing is kept of the "
        "session; fork: the session has no history; restore: a file named is not there",
    ),
    (
        EXIT_AWAITING_APPROVAL,
        "the turn paused: a tool call waits for a person's approval (--approve-tool, or a "
        "plugin's policy) and no terminal was there to ask; stderr lists the calls and the "
        "`neuron-turn resume` command that continues the turn; fork: the turn forked up to "
        "waits so (approving its calls in both sessions would run them twice)",
    ),
    (
        EXIT_DECISIONS,
        "`neuron-turn resume` decisions do not fit the paused session (a call without a "
        "decision, an unknown or twice-decided call, an edited input the tool refuses, a "
        "session not paused), or `run` gave a new message to a paused session; nothing ran",
    ),
    (
        EXIT_IMAGES,
        "--save-images: an image of the answer could not be written (the disk, the "
        "directory); the turn ran and the session's history keeps its images",
    ),
    (
        EXIT_UNSAVED,
        "the turn ran and its answer was shown, but the state refused to keep its history "
        "and memory (a full disk, a database gone); they are kept in the file the message "
        "names, which `neuron-turn restore FILE` writes once the state takes writes",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
    (
        EXIT_TERMINATED,
        "terminated (SIGTERM, as `timeout` and `kill` send): stopped as Ctrl-C stops it, "
        "what the turn's tools did kept in the session",
    ),
)

_USAGE_ERRORS: Final[tuple[tuple[type[Exception], str], ...]] = (
    (UnknownStopToolError, "--stop-at-tool: {}"),
    (UnsupportedHostedToolError, "--hosted-tool: {}; choose a --model whose provider runs it"),
    (UnsupportedThinkingError, "--thinking: {}"),
    (UnsupportedSamplingError, "--top-p/--top-k/--seed/--stop: {}"),
    (
        UnsupportedStrictOutputError,
        "--strict-output: {}, or choose a --model whose provider has it",
    ),
    (UnsupportedStrictToolsError, "--tool: {}, or choose a --model whose provider has it"),
)
"""A turn's setting its provider or tools refuse: the flag that set it, and the line saying
so (exit 2, as for any flag given a value that cannot be used)."""

_STATE_SOURCES: Final = (
    "the state is set by --state, else $NEURON_STATE_URL (a PostgreSQL database), "
    "else $NEURON_STATE_PATH (a SQLite file)"
)

E = TypeVar("E", bound=BaseException)


class UsageError(ValueError):
    """A command line that asks for something impossible; exits with `EXIT_USAGE`.

    For the checks argparse cannot make alone: an empty prompt, a tool offered
    and not allowed. The message names what was wrong and what to do instead.
    """


def epilog() -> str:
    """Return the exit-code table shown at the end of `--help`."""
    rows = (
        textwrap.fill(meaning, width=78, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
        for code, meaning in _CODES
    )
    return "exit codes:\n" + "\n".join(rows)


def classify(
    exc: PluginError | ProviderError | Layer0Error | ToolError, *, model: str | None
) -> tuple[int, str]:
    """Return the exit code for `exc` and one line naming the cause and what to do."""
    prepare = in_chain(exc, ToolPrepareError)
    if prepare is not None:
        return EXIT_PLUGIN, f"{prepare}; fix that tool's prepare where the tool is defined"
    if isinstance(exc, ToolError):
        if isinstance(exc, ToolSourceError) and in_chain(exc, MCPBridgeError) is None:
            # It may be an --mcp server's (a name clash) or a plugin's source (--tool).
            return EXIT_TOOL_SOURCE, (
                f"{exc}; check that source: an --mcp or --mcp-url server, or the plugin "
                "offering it as a --tool"
            )
        return EXIT_TOOL_SOURCE, f"{exc}; check the --mcp command or --mcp-url{_stderr_of(exc)}"
    auth = in_chain(exc, ProviderAuthenticationError)
    if auth is not None:
        return EXIT_AUTH, _auth_line(auth, model)
    conflict = in_chain(exc, HistoryConflict)
    if conflict is not None:
        return EXIT_CONFLICT, f"{conflict} (--fail-if-changed asked for this)"
    approval = in_chain(exc, ApprovalError)
    if approval is not None:
        return EXIT_DECISIONS, _approval_line(approval)
    state = in_chain(exc, StateError)
    if state is not None:
        # The store's message names the file (or database) and the fix; a retry would fail
        # the same way. Stores never put a password in their messages.
        return EXIT_STATE, f"{state} ({_STATE_SOURCES})"
    for kind, line in _USAGE_ERRORS:
        usage = in_chain(exc, kind)
        if usage is not None:
            return EXIT_USAGE, line.format(usage)
    if isinstance(exc, NoProviderConfiguredError):
        return EXIT_UNKNOWN_PROVIDER, str(exc)
    if isinstance(exc, UnknownProviderError | InvalidModelError):
        return EXIT_UNKNOWN_PROVIDER, f"{exc}; install the provider's plugin or fix --model"
    if isinstance(exc, PluginError):
        return EXIT_PLUGIN, str(exc)
    if isinstance(exc, RetryableError) or (isinstance(exc, ProviderError) and exc.retryable):
        wait = getattr(exc, "retry_after", None)
        after = f" in {wait:g}s" if wait else " later"
        return EXIT_RETRYABLE, f"the provider failed ({exc}); try again{after}"
    if isinstance(exc, NonRetryableError | ProviderError):
        return (
            EXIT_REJECTED,
            f"the provider rejected the request ({exc}); check --model and the prompt",
        )
    if isinstance(exc, EnvError):
        # A crashed child's error carries its stderr below the first line; one line here.
        return EXIT_ENVIRONMENT, str(exc).splitlines()[0]
    if isinstance(exc, OrchError):
        return EXIT_ORCHESTRATOR, str(exc)
    if isinstance(exc, ModelError):
        return (
            EXIT_MODEL,
            f"the model's answer could not be used ({exc}); try again or raise limits",
        )
    return EXIT_ERROR, f"the turn failed: {type(exc).__name__}: {exc}"


def _approval_line(exc: ApprovalError) -> str:
    if isinstance(exc, AwaitingApprovalError):
        return f"{exc} (here: neuron-turn resume SESSION --approve ID or --deny ID)"
    if isinstance(exc, NotAwaitingApprovalError):
        return str(exc)
    return f"{exc}; nothing ran: give one --approve or --deny per pending call"


_KEY_VARIABLE: Final = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")


def _auth_line(exc: ProviderAuthenticationError, model: str | None) -> str:
    provider = exc.provider or (model or "").partition(":")[0] or "the provider"
    # The provider's own message names its variable (openai-responses reads OPENAI_API_KEY);
    # the provider's name is only a guess at it.
    named = _KEY_VARIABLE.search(str(exc))
    variable = named.group() if named else f"{provider.upper().replace('-', '_')}_API_KEY"
    return (
        f"authentication failed for provider {provider!r} ({exc}); "
        f"set its API key (e.g. {variable}) and try again"
    )


def stop_notes(exc: BaseException) -> str:
    """What to add to the line of a command stopped by Ctrl-C: its cancellation's notes.

    The orchestrator notes there what the stop left undone (a workflow no
    worker has taken the cancellation of, a part that could not be kept).
    """
    notes = [
        note
        for error in chain_of(exc)
        if isinstance(error, asyncio.CancelledError)
        for note in getattr(error, "__notes__", ())
    ]
    return "".join(f"; {note}" for note in notes)


def in_chain(exc: BaseException, kind: type[E]) -> E | None:
    """Return the first exception of `kind` in `exc`'s cause/context chain, if any."""
    return next((e for e in chain_of(exc) if isinstance(e, kind)), None)


def chain_of(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then its cause (or else its context), and theirs, each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        yield current
        seen.add(id(current))
        current = current.__cause__ or current.__context__


def _stderr_of(exc: BaseException) -> str:
    """An MCP server's last stderr lines, which its error keeps off its message (for the model)."""
    bridge = in_chain(exc, MCPBridgeError)
    stderr = getattr(bridge, "stderr", "")
    return f"\nlast lines of its stderr:\n{stderr}" if isinstance(stderr, str) and stderr else ""
