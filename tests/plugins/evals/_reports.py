"""Reports built by hand, so what they render is exact."""

from __future__ import annotations

from neuron_evals import EvaluationReport, EvaluationResult, EvaluatorFailure, ReportCase, TaskError

from layer0 import usd


def result(name: str, value: bool | float | str, reason: str | None = None) -> EvaluationResult:
    return EvaluationResult(name=name, value=value, reason=reason, source=name.split("_")[0])


def baseline() -> EvaluationReport:
    return EvaluationReport(
        name="before",
        duration=2.0,
        cases=[
            ReportCase(
                name="capital",
                inputs="Capital of France?",
                expected_output="Paris",
                output="Lyon",
                output_text="Lyon",
                exit_reason="complete",
                cost=usd("0.0010"),
                tokens_in=100,
                tokens_out=20,
                turns_used=1,
                duration=0.8,
                assertions={"EqualsExpected": result("EqualsExpected", False, "expected 'Paris'")},
                scores={"LLMJudge_score": result("LLMJudge_score", 0.5)},
            ),
            ReportCase(
                name="story",
                inputs="Tell me a story.",
                output_text="Once",
                exit_reason="complete",
                cost=usd("0.003"),
                tokens_in=400,
                tokens_out=200,
                turns_used=1,
                duration=1.5,
                assertions={"ExitReasonIs": result("ExitReasonIs", True)},
                scores={"LLMJudge_score": result("LLMJudge_score", 0.4)},
            ),
            ReportCase(name="gone", inputs="x", output_text="x", duration=0.1),
        ],
    )


def current() -> EvaluationReport:
    return EvaluationReport(
        name="after",
        duration=1.9,
        cases=[
            ReportCase(
                name="capital",
                inputs="Capital of France?",
                expected_output="Paris",
                output="Paris",
                output_text="Paris",
                exit_reason="complete",
                cost=usd("0.0012"),
                tokens_in=120,
                tokens_out=30,
                turns_used=1,
                duration=0.52,
                assertions={"EqualsExpected": result("EqualsExpected", True)},
                scores={"LLMJudge_score": result("LLMJudge_score", 0.9, "Right.")},
                evaluator_cost=usd("0.0002"),
            ),
            ReportCase(
                name="story",
                inputs="Tell me a story.",
                output_text="Once upon a time there was a story\nthat went on and on and on.",
                exit_reason="max_turns",
                cost=usd("0.003"),
                tokens_in=400,
                tokens_out=200,
                turns_used=5,
                duration=1.5,
                assertions={"ExitReasonIs": result("ExitReasonIs", False, "it ended max_turns")},
                scores={"LLMJudge_score": result("LLMJudge_score", 0.4)},
                labels={"tone": result("tone", "calm")},
                evaluator_failures=[
                    EvaluatorFailure(
                        name="Contains", source="Contains", error_type="KeyError", message="'x'"
                    )
                ],
            ),
            ReportCase(
                name="broken",
                inputs="boom",
                duration=0.004,
                task_error=TaskError(error_type="ValueError", message="the task broke"),
            ),
        ],
    )
