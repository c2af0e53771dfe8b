"""A report printed to a terminal shows a model's control characters, never acts on them."""

from __future__ import annotations

from neuron_evals import Case, Dataset, EvaluatorContext, EvaluatorOutput, evaluator

HOSTILE = "ok\x1b[2J\x1b]0;pwned\x07\x9b1A done\x7f"


@evaluator
def echoed(ctx: EvaluatorContext) -> EvaluatorOutput:
    return {"verdict": str(ctx.output), "fine": False}


async def test_control_characters_in_outputs_and_results_are_written_out() -> None:
    async def hostile(inputs: object) -> str:
        return HOSTILE

    async def raises(inputs: object) -> str:
        raise RuntimeError(HOSTILE)

    dataset = Dataset(cases=[Case("a", "hi")], evaluators=[echoed])
    shown = (await dataset.evaluate(hostile)).render() + (await dataset.evaluate(raises)).render()
    assert not any((0x00 <= ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert r"ok\x1b[2J\x1b]0;pwned\x07\x9b1A done\x7f" in shown
    assert r"RuntimeError: ok\x1b[2J" in shown
