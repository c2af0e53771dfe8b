"""The keys neuron-turn keeps for itself, which no tool may read or change.

In a session: a model that could write them could rewrite its conversation,
approve its own calls, or reset its own circuit breaker. In the global scope,
under `KEPT_GLOBAL_PREFIX`: the command line's index of sessions and runs,
which holds every conversation's opening words; a model granted global memory
could otherwise read other conversations there, or drop or forge their entries.
In a custom scope named under `KEPT_CUSTOM_PREFIX`: an orchestrator's records
(neuron-orch-temporal's ledger of memory effects applied, by workflow and
turn); a model granted every custom scope could otherwise record a later turn's
effect as applied, so that it is skipped, or drop a record, so that it runs twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from layer0 import HISTORY_KEY, CustomScope, Scope, SessionScope

from .continuation import KEPT_COUNTS_KEY
from .paused_options import PAUSED_OPTIONS_KEY
from .standing import STANDING_KEY

_HELD: Final[Mapping[str, str]] = {
    HISTORY_KEY: "its conversation history",
    STANDING_KEY: "a person's standing decisions",
    KEPT_COUNTS_KEY: "the counts of a turn kept in part",
    PAUSED_OPTIONS_KEY: "the options a turn paused for approval keeps for its resume",
}


KEPT_GLOBAL_PREFIX: Final = "neuron-turn/"
"""Global keys starting with this are neuron-turn's own (the command line's index)."""

KEPT_CUSTOM_PREFIX: Final = "neuron-orch-"
"""Custom scopes named starting with this are the orchestrators' own records."""


def kept_by_loop(scope: Scope, key: str) -> str | None:
    """What `key` of `scope` holds when neuron-turn keeps it (None: memory, open to tools)."""
    if isinstance(scope, SessionScope):
        return _HELD.get(key)
    if scope == "global" and key.startswith(KEPT_GLOBAL_PREFIX):
        return "neuron-turn's index of conversations"
    if isinstance(scope, CustomScope) and scope.name.startswith(KEPT_CUSTOM_PREFIX):
        return "an orchestrator's records"
    return None
