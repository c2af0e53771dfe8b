"""Where the peak RSS of `bench/loop.py --concurrent` goes: one JSON line per stage.

Run with `python bench/rss_breakdown.py`. In a fresh interpreter it imports, in
order, what the `concurrent` scenario loads: asyncio (which imports ssl), then
pydantic with one model, one `RootModel` and one `TypeAdapter` built (the first
build loads pydantic's plugin entry points through `importlib.metadata`), then
py-moneyed (which imports babel), then jsonschema-rs with one schema compiled,
then our packages as the benchmark imports them, then it builds the `tools10`
turn, runs it once, and runs it 200 times at once (each model call waits one
event-loop turn, as `bench/loop.py --concurrent` does, so all 200 are in
flight). Each line is the stage's `VmRSS` growth in MB and the `VmHWM` (peak)
so far, split into anonymous memory (the Python and Rust heaps) and file pages
(code and data of the shared libraries the stage mapped). The third-party
stages are the floor any program using the same libraries pays before any of
our code runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

_FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")


def _status() -> dict[str, float]:
    values: dict[str, float] = {}
    with open("/proc/self/status") as status:
        for line in status:
            key = line.split(":", 1)[0]
            if key in _FIELDS:
                values[key] = int(line.split()[1]) / 1024
    return values


_last = _status()


def _stage(name: str) -> None:
    global _last
    now = _status()
    row: dict[str, object] = {"stage": name, "modules": len(sys.modules)}
    row["rss_added_mb"] = round(now["VmRSS"] - _last["VmRSS"], 1)
    row["anon_added_mb"] = round(now["RssAnon"] - _last["RssAnon"], 1)
    row["file_added_mb"] = round(now["RssFile"] - _last["RssFile"], 1)
    row["peak_mb"] = round(now["VmHWM"], 1)
    print(json.dumps(row), flush=True)
    _last = now


def main() -> None:
    """Print the RSS each stage adds, in the order the concurrent scenario pays it."""
    _stage("interpreter")
    import asyncio

    _stage("asyncio")
    import pydantic

    class _Args(pydantic.BaseModel):
        a: int

    class _Root(pydantic.RootModel[list[int]]):
        pass

    _Args(a=1).model_dump()
    _Root([1]).model_dump_json()
    pydantic.TypeAdapter(int).validate_python(1)
    _stage("pydantic")
    import moneyed

    moneyed.Money(1, "USD") + moneyed.Money(2, "USD")
    _stage("moneyed")
    import jsonschema_rs

    jsonschema_rs.Draft202012Validator(_Args.model_json_schema()).is_valid({"a": 1})
    _stage("jsonschema_rs")
    sys.path.insert(0, str(Path(__file__).parent))
    import loop  # the benchmark itself: its imports are what a turn's program imports

    _stage("ours")

    async def runs() -> None:
        waiting = loop._Waiting()
        turn = loop._turn(loop._over_the_wire(loop._steps(10), waiting))
        add = loop.TurnInput(message="add", trigger="user")
        loop._check(await turn.execute(add), 10)
        _stage("turn_built_and_run")
        outputs = await asyncio.gather(*(turn.execute(add) for _ in range(200)))
        for output in outputs:
            loop._check(output, 10)
        assert waiting.most == 200, waiting.most  # every run was in flight at once
        _stage("200_concurrent_runs")

    asyncio.run(runs())


if __name__ == "__main__":
    main()
