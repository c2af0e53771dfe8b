"""`Placement`: the environment an agent's turns run in, and the spec they run under."""

from __future__ import annotations

from dataclasses import dataclass, field

from layer0 import (
    Environment,
    EnvironmentSpec,
    TurnInput,
    TurnOutput,
    continues_partial_turns,
)

__all__ = ["Placement"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Run an agent's turns with `environment.run(input, spec)` instead of in this process.

    The orchestrator still carries out the effects the turn declares, here,
    on its store: a sandboxed turn never writes state itself.
    """

    environment: Environment
    spec: EnvironmentSpec = field(default_factory=EnvironmentSpec)

    @property
    def continues_partial_turns(self) -> bool:
        """Whether the environment's turns read continuations (`layer0.PartialTurn`)."""
        return continues_partial_turns(self.environment)

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Run one turn in the environment (so a placement is itself a `layer0.Turn`)."""
        return await self.environment.run(input, self.spec)
