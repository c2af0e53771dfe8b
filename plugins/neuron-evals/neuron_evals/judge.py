"""`LLMJudge`: a model grades the answer against a rubric, as pydantic-evals' `LLMJudge`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from pydantic import BaseModel, Field, JsonValue

from layer0 import TurnInput
from neuron_turn import NeuronTurn, NeuronTurnConfig, Provider, get_provider

from ._json import as_text
from .context import EvaluatorContext, exit_reason_text
from .errors import JudgeError
from .evaluator import EvaluationReason, EvaluationScalar, Evaluator, EvaluatorOutput

__all__ = ["JUDGE_SYSTEM", "JudgeVerdict", "LLMJudge"]

JUDGE_SYSTEM: Final = (
    "You grade the output of an AI system against a rubric. Read the rubric, then the "
    "output (and the input and expected output when given). Answer with a short reason, "
    "whether the output passes the rubric, and a score from 0 (fails it entirely) to 1 "
    "(meets it fully)."
)
"""The judge's system prompt."""


class JudgeVerdict(BaseModel):
    """What the judge answers: why, whether the output passes, and a score in [0, 1]."""

    reason: str
    """Why, in a sentence or two."""
    passed: bool
    """Whether the output meets the rubric."""
    score: float = Field(ge=0, le=1)
    """How well it meets it, 0 to 1."""


@dataclass(frozen=True)
class LLMJudge(Evaluator):
    """A model judges the answer against `rubric` through a `neuron_turn.Provider`.

    Give `provider` (any `Provider`; `model` is then the model it is asked
    for), or only `model` as `"<provider>:<model>"` to build one from the
    installed plugins when it first judges. It runs a small typed
    `NeuronTurn` whose output is a `JudgeVerdict`; its cost is the case's
    evaluator cost, apart from the task's. It returns an assertion named
    `evaluation_name` (default `LLMJudge`) with the judge's reason, and a score
    named `<evaluation_name>_score`; `score=False` or `assertion=False` leaves
    one out. `include_input` and `include_expected_output` show the judge the
    case's input and expected output. A dataset file holds every argument but
    `provider`, which never leaves the process (nor does its key).
    """

    rubric: str
    provider: Provider | None = field(default=None, repr=False, compare=False)
    model: str | None = None
    include_input: bool = False
    include_expected_output: bool = False
    score: bool = True
    assertion: bool = True
    evaluation_name: str | None = None

    def spec_arguments(self) -> dict[str, JsonValue]:
        """Its arguments for a dataset file, without the provider."""
        arguments = super().spec_arguments()
        arguments.pop("provider", None)
        return arguments

    def prompt(self, ctx: EvaluatorContext) -> str:
        """The judge's message: the input and expected output if asked, the output, the rubric."""
        parts: list[str] = []
        if self.include_input:
            inputs = ctx.inputs if isinstance(ctx.inputs, str) else ctx.inputs.message.as_text()
            parts.append(f"<Input>\n{inputs or ''}\n</Input>")
        output = ctx.output if isinstance(ctx.output, str) else as_text(ctx.output)
        parts.append(f"<Output>\n{output}\n</Output>")
        if self.include_expected_output and ctx.expected_output is not None:
            parts.append(f"<ExpectedOutput>\n{as_text(ctx.expected_output)}\n</ExpectedOutput>")
        parts.append(f"<Rubric>\n{self.rubric}\n</Rubric>")
        return "\n".join(parts)

    def _provider(self) -> tuple[Provider, str, bool]:
        """The judge's provider, the model asked of it, and whether it was built here."""
        if self.provider is not None:
            return self.provider, self.model or "", False
        if self.model:
            return get_provider(self.model), self.model.partition(":")[2], True
        raise JudgeError("LLMJudge needs provider= or model='<provider>:<model>'")

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluatorOutput:
        """Ask the judge and return its verdict as an assertion and a score."""
        provider, model, built = self._provider()
        config = NeuronTurnConfig(
            system=JUDGE_SYSTEM, model=model, effect_tools=False, memory_tools=False
        )
        turn = NeuronTurn(provider, config=config, output_type=JudgeVerdict)
        try:
            output = await turn.execute(TurnInput(message=self.prompt(ctx), trigger="user"))
        finally:
            # Built for this judgment only: its HTTP client (and connections) must not
            # outlive it, one more per case of a long run.
            close = getattr(provider, "aclose", None) if built else None
            if close is not None:
                await close()
        ctx.record_cost(output.metadata.cost)
        if output.exit_reason != "complete":
            raise JudgeError(
                f"the judge's turn ended {exit_reason_text(output.exit_reason)} without a verdict"
            )
        verdict = turn.output_value(output)
        name = self.result_name()
        results: dict[str, EvaluationScalar | EvaluationReason] = {}
        if self.assertion:
            results[name] = EvaluationReason(verdict.passed, verdict.reason)
        if self.score:
            score_name = f"{name}_score" if self.assertion else name
            results[score_name] = EvaluationReason(verdict.score, verdict.reason)
        return results
