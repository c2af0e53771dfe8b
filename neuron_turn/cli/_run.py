"""`neuron-turn run` and `neuron-turn worker`: turns dispatched through an orchestrator.

The command line is an orchestrator's caller like any other: it builds the
turn from plugins and hands it to the `local` orchestrator, which carries out
the turn's effects on the `sqlite` state store (the conversation history
among them). With another orchestrator (`temporal`) the turn runs on a
worker, which `neuron-turn worker` starts with the same turn options.
`--session` continues a conversation. `--environment` runs the turn in an
environment a plugin registered (`process`, `sandbox`), built from the same
turn options; its effects still run here, on the store.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pydantic import JsonValue

from layer0 import (
    Content,
    CustomBlock,
    DispatchFailed,
    EffectPolicy,
    Environment,
    EnvironmentSpec,
    ImageBlock,
    Layer0Error,
    StateStore,
    TextBlock,
    Turn,
    TurnConfig,
    TurnInput,
    TurnOutput,
)
from neuron_tool import ToolError
from neuron_tool.context import RunContext
from neuron_tool.registry import ToolRegistry
from neuron_tool.source import ToolSource
from neuron_tool.tool_views import filtered_tools

from ..loop.approval import ApprovalPolicy, Decision
from ..loop.config import NeuronTurnConfig
from ..loop.continuation import continuation_input
from ..loop.events import TurnEvent
from ..loop.hosted_tools import HostedTool, hosted_tool_json
from ..loop.provider_errors import ProviderError
from ..loop.sampling import Sampling
from ..loop.stream import close_cancelled
from ..loop.thinking import Thinking
from ..loop.turn import NeuronTurn
from ..plugins import PluginManager
from ..plugins.errors import NoProviderConfiguredError, PluginError
from ._approve import Decide, resume_paused, until_decided
from ._closing import close_resource
from ._elicitation import TerminalQuestions
from ._errors import UsageError
from ._fallback import local_agent
from ._sampling import LateSampler
from ._sessions import new_session_note, record_run
from ._state_option import open_state_store
from ._unsaved import unsaved_of
from ._visible import shown_on
from .progress import ProgressHook

if TYPE_CHECKING:
    from neuron_tool.mcp import MCPClient

REPORTED: Final = (PluginError, ProviderError, Layer0Error, ToolError)
"""The errors the command line turns into one line and an exit code."""

AGENT: Final = "main"
"""The agent name the command line dispatches its turn to."""

# Tried in order when --model is not given: a provider whose key is set wins.
_CONFIGURED: Final = (
    ("ANTHROPIC_API_KEY", "anthropic", "anthropic:claude-haiku-4-5"),
    ("OPENAI_API_KEY", "openai", "openai:gpt-4o-mini"),
    ("GEMINI_API_KEY", "google", "google:gemini-2.5-flash"),
)
_LOCAL: Final = "local:default"


@dataclass(frozen=True, kw_only=True)
class TurnSpec:
    """How to build the turn: model, system prompt, tools and MCP servers."""

    model: str | None = None
    system: str = ""
    tools: Sequence[str] = ()
    mcp_commands: Sequence[str] = ()
    mcp_urls: Sequence[str] = ()
    mcp_allow: Sequence[str] = ()
    """The only tools of the MCP servers offered (empty: all of them)."""
    mcp_block: Sequence[str] = ()
    """The tools of the MCP servers never offered."""
    mcp_token_env: str | None = None
    """The environment variable holding the bearer token for the `mcp_urls` servers."""
    mcp_sampling: bool = False
    """Whether the MCP servers may have the turn's model write for them (MCP sampling)."""
    progress: bool = False
    context: str = "sliding_window"
    """The context strategy's registered name."""
    context_options: Mapping[str, Any] = field(default_factory=dict)
    context_limit: int | None = None
    """Tokens a request may take before compaction (None: the model's window)."""
    grants: Sequence[str] = ()
    """What the model may reach beyond its session's memory (`layer0.EffectPolicy` grants)."""
    approve_tools: Sequence[str] = ()
    """Tool names or patterns whose calls wait for a person's approval."""
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments for the provider's factory (`--option KEY=VALUE`), e.g. `base_url`."""
    questions: TerminalQuestions | None = None
    """Who answers the MCP servers' questions mid tool call (a person at the terminal)."""
    hosted_tools: Sequence[HostedTool] = ()
    """The hosted tools the provider runs for the turn (`--hosted-tool`), with their limits."""
    thinking: Thinking | None = None
    """How much the model thinks before it answers (`--thinking`; None: the model's own)."""
    temperature: float | None = None
    """The sampling temperature (`--temperature`; None: the API's)."""
    sampling: Sampling | None = None
    """`--top-p`, `--top-k`, `--seed` and `--stop` (None: the API's defaults)."""

    def effect_policy(self) -> EffectPolicy:
        """Return the policy of `grants`, for the turn and the orchestrator alike."""
        return EffectPolicy(grants=tuple(self.grants))


@dataclass(frozen=True, kw_only=True)
class Orchestration:
    """Which orchestrator runs the turn, and where its state lives.

    `local` runs the turn in this process; any other orchestrator hands it to
    a worker (`neuron-turn worker`), which holds the turn and the store.
    """

    name: str = "local"
    address: str | None = None
    task_queue: str | None = None
    payload_dir: str | None = None
    """Where the remote orchestrator and its worker keep large payloads (None: inline)."""
    state_path: str | None = None
    pickup_timeout: float | None = None
    """How long a dispatch waits for a worker to pick it up (orchestrator only)."""
    environment: str | None = None
    """The environment the local orchestrator runs the turn in (None: this process)."""

    def options(self) -> dict[str, Any]:
        """Return the options the remote orchestrator's worker takes."""
        given = {
            "address": self.address,
            "task_queue": self.task_queue,
            "payload_dir": self.payload_dir,
        }
        return {key: value for key, value in given.items() if value is not None}

    def orchestrator_options(self) -> dict[str, Any]:
        """Return the options for the remote orchestrator itself.

        Its dispatch stops with the command (Ctrl-C), keeping what the turn's
        tools did: a turn left running on a worker would go on writing to the
        session after the command said it was interrupted.
        """
        extra = {} if self.pickup_timeout is None else {"pickup_timeout": self.pickup_timeout}
        return self.options() | extra | {"stop_with_caller": True}


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """What `neuron-turn run` was asked to do."""

    prompt: str
    attachments: Sequence[ImageBlock | CustomBlock] = ()
    """Images and documents sent after the prompt's text (`--attach`)."""
    session: str | None = None
    config: TurnConfig = field(default_factory=TurnConfig)
    turn: TurnSpec = field(default_factory=TurnSpec)
    orchestration: Orchestration = field(default_factory=Orchestration)
    metadata: JsonValue = None
    """The turn input's metadata (the loop's per-call options: output schema, tool choice)."""
    fallbacks: Sequence[str] = ()
    """Models to fall back on, in order (local orchestrator; see `cli._fallback`)."""
    retry: Mapping[str, Any] = field(default_factory=dict)
    """The local orchestrator's retry options (`cli._fallback.retry_options`)."""
    decisions: Sequence[Decision] | None = None
    """A resume (`neuron-turn resume`): the decisions on the paused session's calls."""
    decide: Decide | None = None
    """Asks a person when the turn pauses for approval, then resumes (None: the pause ends it)."""
    stopping: Callable[[], None] | None = None
    """Told when a dispatch to a worker is cancelled (Ctrl-C), as the worker is asked to stop."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """The turn's output, the session it belongs to and the model that answered."""

    output: TurnOutput
    session: str
    model: str | None
    """None when a worker elsewhere chose the model."""


def choose_model(manager: PluginManager, environ: Mapping[str, str]) -> tuple[str, str]:
    """Return the model to use when none was given, and why it was chosen.

    Raises:
        NoProviderConfiguredError: no key is set and the local provider is not installed.
    """
    providers = manager.names("provider")
    for variable, provider, model in _CONFIGURED:
        if environ.get(variable) and provider in providers:
            return model, f"{variable} is set"
    if "local" in providers:
        return _LOCAL, "no API key is set; using the embedded local model"
    raise NoProviderConfiguredError(providers)


async def run_turn(
    manager: PluginManager,
    request: RunRequest,
    on_event: Callable[[TurnEvent], None] | None = None,
) -> RunResult:
    """Dispatch one turn through the chosen orchestrator and record its session.

    `max_duration` covers starting the MCP servers too: each may take at most
    that long to connect, and the turn gets what is left. With `on_event`, the
    turn is streamed through an orchestrator that can: each event of it
    reaches `on_event` as it happens.
    """
    started = time.monotonic()
    session = request.session or uuid.uuid4().hex[:12]
    orchestration = request.orchestration
    limit = request.config.max_duration
    async with AsyncExitStack() as stack:
        store = open_state_store(orchestration.state_path, manager=manager)
        stack.push_async_callback(close_resource, store)
        if orchestration.name == "local":
            _ignored_remote_options(orchestration)
            if request.session is not None:
                await _say_if_new(store, request.session)
            within = None if limit is None else limit / 1000
            turn, model = await _local_turn(
                stack, manager, request.turn, store, orchestration, connect=within
            )
            agent = local_agent(stack, manager, turn, model, request.fallbacks)
            orchestrator = manager.get_orchestrator(
                "local", agents={AGENT: agent}, store=store, **request.retry
            )
        else:
            model = None
            _ignored_turn_options(request.turn, orchestration.name)
            options = orchestration.orchestrator_options()
            orchestrator = manager.get_orchestrator(orchestration.name, **options)
            stack.push_async_callback(close_resource, orchestrator)
        config = _left_after(request.config, started)
        message = (
            Content([TextBlock(text=request.prompt), *request.attachments])
            if request.attachments
            else Content(request.prompt)
        )
        turn_input = TurnInput(
            message=message,
            trigger="user",
            session=session,
            config=config,
            metadata=request.metadata,
        )

        async def dispatch(turn_input: TurnInput) -> TurnOutput:
            if orchestration.name == "local":
                return await _dispatch(orchestrator, turn_input, on_event)
            dispatching = _dispatch(orchestrator, turn_input, on_event)
            return await _saying_it_stops(dispatching, request.stopping)

        async def resume(decisions: Sequence[Decision], config: TurnConfig) -> TurnOutput:
            return await resume_paused(orchestrator, session, decisions, dispatch, config)

        if request.decisions is None:
            output = await dispatch(turn_input)
        elif request.decisions:
            output = await resume(request.decisions, config)
        else:
            # `resume SESSION` with no decision: go on from what a failed turn kept.
            output = await dispatch(continuation_input(turn_input))
        if request.decide is not None:
            # A person's time deciding is not the turn's: each resume gets the full limits.
            async def resumed(decisions: list[Decision]) -> TurnOutput:
                return await resume(decisions, request.config)

            output = await until_decided(request.decide, session, output, resumed)
        await record_run(store, session, request.prompt)
    return RunResult(output, session, model)


async def serve_worker(
    manager: PluginManager, spec: TurnSpec, orchestration: Orchestration
) -> None:
    """Host the command line's agent for `orchestration.name` until interrupted."""
    async with AsyncExitStack() as stack:
        store = open_state_store(orchestration.state_path, manager=manager)
        stack.push_async_callback(close_resource, store)
        turn, _ = await build_turn(stack, manager, spec, store)
        options = orchestration.options()
        if spec.grants:
            # The worker refuses what its agent's policy does not allow; this is it.
            options["default_policy"] = spec.effect_policy()
        worker = manager.get_worker(orchestration.name, **options)
        print(
            f"neuron-turn: worker for {orchestration.name} hosting agent {AGENT!r}; "
            "stop with Ctrl-C",
            file=sys.stderr,
        )
        await worker.run({AGENT: turn}, store)


async def build_turn(
    stack: AsyncExitStack,
    manager: PluginManager,
    spec: TurnSpec,
    store: StateStore,
    *,
    connect: float | None = None,
) -> tuple[NeuronTurn, str]:
    """Build the turn from plugins; its provider and MCP servers close with `stack`.

    `connect` caps the seconds each MCP server may take to connect (below the
    MCP client's own `connect_timeout`).
    """
    model = spec.model or _announce(*choose_model(manager, os.environ))
    # The servers connect before the turn exists: its provider answers them once built.
    sampler = LateSampler() if spec.mcp_sampling else None
    mcp = await _mcp_servers(stack, spec, connect, sampler)
    turn = NeuronTurn.from_plugins(
        model=model,
        tools=[*spec.tools, *mcp],
        system=spec.system,
        state=store,
        context=spec.context,
        context_options=spec.context_options,
        provider_options=spec.provider_options,
        config=NeuronTurnConfig(
            effect_policy=spec.effect_policy(),
            context_limit=spec.context_limit,
            approval=ApprovalPolicy.of(spec.approve_tools) if spec.approve_tools else None,
            hosted_tools=spec.hosted_tools,
            thinking=spec.thinking,
            temperature=spec.temperature,
            sampling=spec.sampling,
        ),
    )
    stack.push_async_callback(close_resource, turn.provider)
    if mcp:
        # Now, not at the first answer: a server's tool named as a `--tool` one is
        # refused naming the server (`mcp_servers` refused two servers' clashes).
        await offered_tools(turn)
    if sampler is not None:
        sampler.answer_with(turn.provider)
    if spec.progress:
        turn.hooks.add(ProgressHook(sys.stderr), name=ProgressHook.name, observer=True)
    return turn, model


class _InEnvironment:
    """The command line's agent as a `layer0.Turn` that `environment` runs."""

    def __init__(self, environment: Environment) -> None:
        self.environment = environment

    async def execute(self, input: TurnInput) -> TurnOutput:
        return await self.environment.run(input, EnvironmentSpec())


async def _local_turn(
    stack: AsyncExitStack,
    manager: PluginManager,
    spec: TurnSpec,
    store: StateStore,
    orchestration: Orchestration,
    *,
    connect: float | None = None,
) -> tuple[Turn, str]:
    """The turn built here, or (with `--environment`) the environment that builds it."""
    if orchestration.environment is None:
        return await build_turn(stack, manager, spec, store, connect=connect)
    model = spec.model or _announce(*choose_model(manager, os.environ))
    recipe: dict[str, Any] = {"model": model, "tools": list(spec.tools), "system": spec.system}
    if spec.approve_tools:
        recipe["approve_tools"] = list(spec.approve_tools)
    if spec.thinking is not None:
        recipe["thinking"] = spec.thinking
    if spec.temperature is not None:
        recipe["temperature"] = spec.temperature
    if spec.sampling is not None:
        recipe["sampling"] = spec.sampling
    if spec.hosted_tools:
        # Only when asked for: an environment that cannot take them refuses the key.
        recipe["hosted_tools"] = [hosted_tool_json(tool) for tool in spec.hosted_tools]
    environment = manager.get_environment(
        orchestration.environment, recipe, state=store, plugins=manager
    )
    stack.push_async_callback(close_resource, environment)
    if spec.progress:
        print(
            f"neuron-turn: note: the turn runs in the {orchestration.environment} environment; "
            "model and tool calls are not shown as they happen",
            file=sys.stderr,
        )
    return _InEnvironment(environment), model


async def _saying_it_stops(
    dispatching: Awaitable[TurnOutput], stopping: Callable[[], None] | None
) -> TurnOutput:
    """Await a remote dispatch; cancelled (Ctrl-C), say so at once, then wait for its stop.

    The orchestrator stops the turn on its worker (`stop_with_caller`), which
    hears of it only at the turn's next heartbeat: seconds without a word
    otherwise. `stopping` is told as well (the waiting line then says so).
    """
    work = asyncio.ensure_future(dispatching)
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if work.done():
            raise
        sys.stderr.write("neuron-turn: stopping the turn on its worker (at its next heartbeat)\n")
        sys.stderr.flush()
        if stopping is not None:
            stopping()
        work.cancel()
        await work  # its own end: the cancellation (with what it noted), or its error
        raise  # it finished all the same


async def _dispatch(
    orchestrator: Any, turn_input: TurnInput, on_event: Callable[[TurnEvent], None] | None
) -> TurnOutput:
    try:
        if on_event is not None and callable(getattr(orchestrator, "stream", None)):
            return await streamed(orchestrator, turn_input, on_event)
        output: TurnOutput = await orchestrator.dispatch(AGENT, turn_input)
    except DispatchFailed as exc:
        # The turn's own error says what to do (set a key, retry); report that one
        # when it is one the command line explains; re-raised as is, so its own
        # cause, e.g. the provider's error, stays chained.
        if isinstance(exc.__cause__, REPORTED) and unsaved_of(exc) is None:
            raise exc.__cause__  # noqa: B904
        raise  # one holding writes the state refused keeps them (`_unsaved`)
    return output


async def streamed(
    orchestrator: Any, turn_input: TurnInput, on_event: Callable[[TurnEvent], None]
) -> TurnOutput:
    """Dispatch `turn_input` to the agent, each event of its turns to `on_event`.

    Cancelled (Ctrl-C), the dispatch stops keeping what its turn's tools did,
    and the cancellation says so (`kept_partial`).
    """
    async with orchestrator.stream(AGENT, turn_input) as events:
        try:
            async for item in events:
                on_event(item.event)
        except asyncio.CancelledError as cancelled:
            await close_cancelled(events, cancelled)
            raise
    output: TurnOutput = events.result.output
    return output


async def _mcp_servers(
    stack: AsyncExitStack, spec: TurnSpec, connect: float | None, sampler: LateSampler | None
) -> list[ToolSource]:
    """The `--mcp` and `--mcp-url` servers, connected, as the turn's tool sources.

    Sources, not their tools listed once: each run of the turn lists them (from
    the clients' caches until a server says its tools changed), so a chat, or a
    worker, offers a tool a server added since its last answer.
    """
    if not (spec.mcp_commands or spec.mcp_urls):
        if spec.mcp_allow or spec.mcp_block:
            flag = "--mcp-allow" if spec.mcp_allow else "--mcp-block"
            raise UsageError(f"{flag} names tools of MCP servers; give an --mcp or --mcp-url")
        if spec.mcp_sampling:
            print(
                "neuron-turn: note: --mcp-sampling lets MCP servers (--mcp, --mcp-url) sample;"
                " none was given",
                file=sys.stderr,
            )
        return []
    # The MCP SDK takes ~0.5 s to import.
    from neuron_tool.mcp import HttpEndpoint, mcp_servers
    from neuron_tool.mcp.client import DEFAULT_CONNECT_TIMEOUT

    seconds = DEFAULT_CONNECT_TIMEOUT if connect is None else min(connect, DEFAULT_CONNECT_TIMEOUT)
    headers = {}
    if spec.mcp_token_env is not None:
        # Read here, not kept in the spec: the token stays out of every repr.
        headers["Authorization"] = f"Bearer {os.environ[spec.mcp_token_env]}"
    urls = [HttpEndpoint(url, headers) for url in spec.mcp_urls]
    servers = mcp_servers(
        commands=spec.mcp_commands,
        urls=urls,
        connect_timeout=seconds,
        elicitation=spec.questions,
        sampling=sampler,
    )
    clients = list(await stack.enter_async_context(servers))
    if not (spec.mcp_allow or spec.mcp_block):
        return list(clients)
    return await _mcp_filtered(clients, spec.mcp_allow, spec.mcp_block)


async def _mcp_filtered(
    clients: Sequence[MCPClient], allow: Sequence[str], block: Sequence[str]
) -> list[ToolSource]:
    """The servers with only the tools `allow` names (all, if none) and none `block` names.

    Raises:
        UsageError: a name no server offers now (a misspelt name would leave a tool
            offered, or none).
    """
    offered = {tool.name for client in clients for tool in await client.list_tools()}
    for flag, names in (("--mcp-allow", allow), ("--mcp-block", block)):
        unknown = sorted(set(names) - offered)
        if unknown:
            raise UsageError(
                f"{flag} names tools no MCP server offers: {', '.join(unknown)}; "
                f"they offer: {', '.join(sorted(offered)) or 'none'}"
            )
    return [filtered_tools(client, allow=allow or None, block=block) for client in clients]


async def offered_tools(turn: NeuronTurn, session: str | None = None) -> ToolRegistry:
    """The tools a run of `turn` on `session` would offer now: its own and its sources'.

    Why: the `--mcp` and `--mcp-url` servers' tools are not among `turn.tools`
    but given to each run (tool sources); what a chat lists or checks its stop
    tools against is this. The servers are asked from their clients' caches.

    Raises:
        ToolSourceError: A source failed, or offers a tool of a name taken, naming it.
    """
    return await turn.tools.for_run(RunContext(deps=turn.deps, session=session))


def _left_after(config: TurnConfig, started: float) -> TurnConfig:
    """Return `config` with what is left of its `max_duration` since `started`."""
    if config.max_duration is None:
        return config
    spent = int((time.monotonic() - started) * 1000)
    # At least 1 ms: a deadline already passed ends the turn at once, as `timeout`.
    return config.model_copy(update={"max_duration": max(1, config.max_duration - spent)})


def _ignored_turn_options(spec: TurnSpec, orchestrator: str) -> None:
    given = [
        flag
        for flag, value in (
            ("--model", spec.model),
            ("--system", spec.system),
            ("--tool", spec.tools),
            ("--mcp", spec.mcp_commands),
            ("--mcp-url", spec.mcp_urls),
            ("--mcp-allow", spec.mcp_allow),
            ("--mcp-block", spec.mcp_block),
            ("--mcp-sampling", spec.mcp_sampling),
            ("--context", spec.context != "sliding_window"),
            ("--context-option", spec.context_options),
            ("--context-limit", spec.context_limit),
            ("--approve-tool", spec.approve_tools),
            ("--option", spec.provider_options),
            ("--temperature", spec.temperature is not None),
            ("--top-p/--top-k/--seed/--stop", spec.sampling is not None),
        )
        if value
    ]
    if given:
        print(
            f"neuron-turn: note: with --orchestrator {orchestrator} the worker builds the turn; "
            f"{', '.join(given)} apply to `neuron-turn worker`, not here",
            file=sys.stderr,
        )


def _ignored_remote_options(orchestration: Orchestration) -> None:
    flags = {
        "--temporal-address": orchestration.address,
        "--task-queue": orchestration.task_queue,
        "--payload-dir": orchestration.payload_dir,
    }
    given = [flag for flag, value in flags.items() if value is not None]
    if given:
        print(
            f"neuron-turn: note: {', '.join(given)} apply to --orchestrator temporal; "
            "the local orchestrator runs the turn here and ignores them",
            file=sys.stderr,
        )


async def _say_if_new(store: StateStore, session: str) -> None:
    note = await new_session_note(store, session)
    if note is not None:  # it may name a kept session: any client's id, shown inert
        print(shown_on(sys.stderr)(f"neuron-turn: note: {note}"), file=sys.stderr)


def _announce(model: str, reason: str) -> str:
    print(f"neuron-turn: using {model} ({reason}); choose another with --model", file=sys.stderr)
    return model
