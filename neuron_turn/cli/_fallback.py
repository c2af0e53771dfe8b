"""`--fallback` and `--retries`: the models `run` falls back on, and how often it retries.

With the local orchestrator, a model that fails in a way a retry does not
fix (a bad key, an unknown model), or whose retries run out, gives way to
the next `--fallback` model; the turn's output records who answered (see
neuron-orch-local's `FallbackTurn`). Each fallback turn shares the primary
turn's tools, hooks, context strategy and config: only the provider and
model differ.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from layer0 import Turn

from ._closing import close_resource
from ._numbers import whole_number

if TYPE_CHECKING:
    # The loop is imported only when a turn runs, not to parse the command line.
    from ..loop.turn import NeuronTurn
    from ..plugins import PluginManager

__all__ = ["add_fallback_arguments", "fallback_usage_error", "local_agent", "retry_options"]


def add_fallback_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--fallback P:M` (repeat) and `--retries N` to `parser`."""
    parser.add_argument(
        "--fallback",
        action="append",
        default=[],
        metavar="P:M",
        help="a model to fall back on when the model before it fails for good or its "
        "retries run out (repeat for a chain; local orchestrator only)",
    )
    parser.add_argument(
        "--retries",
        type=whole_number,
        default=None,
        metavar="N",
        help="retries of a model call that may succeed later (rate limit, overload), "
        "waiting what the provider asks or backing off (default: 2; local orchestrator only)",
    )


def fallback_usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with `--fallback`/`--retries` next to the other options, if anything."""
    given = [
        flag
        for flag, value in (("--fallback", args.fallback), ("--retries", args.retries))
        if value is not None and value != []
    ]
    if given and args.orchestrator != "local":
        flags = " and ".join(given)
        return f"{flags}: local orchestrator only (a worker elsewhere runs the turn)"
    if args.fallback and args.environment is not None:
        return "--fallback works with turns built here, not with --environment"
    repeated = sorted({name for name in args.fallback if args.fallback.count(name) > 1})
    if repeated or (args.model is not None and args.model in args.fallback):
        return f"--fallback {(repeated or [args.model])[0]} is already in the chain of models"
    return None


def retry_options(retries: int | None) -> dict[str, Any]:
    """The local orchestrator's `retry` option for `--retries` (none: its default)."""
    return {} if retries is None else {"retry": {"max_attempts": retries + 1}}


def local_agent(
    stack: AsyncExitStack,
    manager: PluginManager,
    turn: Turn,
    model: str,
    fallbacks: Sequence[str],
) -> Turn | dict[str, Turn]:
    """The agent to give the local orchestrator: `turn`, or the chain of it and its fallbacks.

    Raises:
        ValueError: fallbacks for a turn built elsewhere (`--environment`).
        neuron_turn.PluginError: an unknown fallback provider.
    """
    from ..loop.turn import NeuronTurn

    if not fallbacks:
        return turn
    if not isinstance(turn, NeuronTurn):
        raise ValueError("--fallback works with turns built here, not with --environment")
    chain: dict[str, Turn] = {model: turn}
    for name in fallbacks:
        if name in chain:
            raise ValueError(f"--fallback {name} is already in the chain of models")
        chain[name] = _fallback_turn(stack, manager, turn, name)
    return chain


def _fallback_turn(
    stack: AsyncExitStack, manager: PluginManager, primary: NeuronTurn, model: str
) -> NeuronTurn:
    from ..loop.turn import NeuronTurn

    provider = manager.get_provider(model)
    stack.push_async_callback(close_resource, provider)
    return NeuronTurn(
        provider,
        tools=primary.tools,
        hooks=primary.hooks,
        context=primary.context,
        state=primary.state,
        config=replace(primary.config, model=model.partition(":")[2]),
        output_type=primary.output,
    )
