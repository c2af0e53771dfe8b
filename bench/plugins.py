"""Cost of plugin discovery, each in a fresh process; one JSON line per measurement.

Run with `python bench/plugins.py [runs] [--model P:M]...`. Measures, as the
median of `runs` fresh processes (default 5):

- `neuron-turn plugins`: the whole command, process start to exit;
- `python -c "import neuron_turn"`: the baseline every command pays;
- the first `get_provider(model)` in a fresh process: the process's wall
  time, and inside it the time to load every plugin and then to build the
  provider (the factory's heavy imports happen there), with the modules that
  building imported.

Asserts nothing: it prints numbers to compare across changes. Models default
to one per installed provider plugin (`<provider>:bench`); a factory that
refuses (e.g. no API key) is reported with its error, timed all the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

COMMAND = Path(sys.executable).parent / "neuron-turn"

FIRST_PROVIDER = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
from neuron_turn.plugins import get_plugin_manager, get_provider
manager = get_plugin_manager()
listed = time.perf_counter()
before = set(sys.modules)
try:
    get_provider(sys.argv[1])
    error = None
except Exception as exc:
    error = f"{type(exc).__name__}: {exc}"
done = time.perf_counter()
print(json.dumps({
    "load_s": listed - start,
    "provider_s": done - listed,
    "total_s": done - start,
    "error": error,
    "new_modules": len(set(sys.modules) - before),
    "heavy": sorted(m for m in set(sys.modules) - before if m in ("httpx", "genai_prices")),
}))
"""


def wall(argv: list[str], runs: int) -> list[float]:
    """Return the wall time of `runs` fresh runs of `argv`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=_env())
        times.append(time.perf_counter() - start)
    return times


def first_provider(model: str, runs: int) -> tuple[list[float], list[dict[str, Any]]]:
    """Return the wall times of `runs` fresh processes and what FIRST_PROVIDER reported."""
    times, samples = [], []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", FIRST_PROVIDER, model],
            check=True,
            capture_output=True,
            text=True,
            env=_env(),
        )
        times.append(time.perf_counter() - start)
        samples.append(json.loads(done.stdout))
    return times, samples


def default_models() -> list[str]:
    """Return `<provider>:bench` for every provider the installed plugins register."""
    listing = subprocess.run(
        [str(COMMAND), "plugins", "--json"], check=True, capture_output=True, text=True
    )
    plugins = json.loads(listing.stdout)["plugins"]
    return [
        f"{name}:bench"
        for p in plugins
        if p["distribution"] != "neuron-fixture-plugin"  # the test suite's, not a real one
        for name in p["registered"]["providers"]
    ]


def report(name: str, times: list[float], **extra: object) -> None:
    """Print one JSON line: the median and spread of `times`, in milliseconds."""
    line = {
        "bench": name,
        "runs": len(times),
        "median_ms": round(statistics.median(times) * 1000, 1),
        "min_ms": round(min(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        **extra,
    }
    print(json.dumps(line), flush=True)


def _env() -> dict[str, str]:
    # The caller's NEURON_LOAD_PLUGINS etc. are kept: they are part of what is measured.
    return dict(os.environ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=5)
    parser.add_argument("--model", action="append", help="P:M to build (repeat)")
    args = parser.parse_args()
    runs: int = args.runs
    report("import neuron_turn", wall([sys.executable, "-c", "import neuron_turn"], runs))
    report("neuron-turn plugins", wall([str(COMMAND), "plugins"], runs))
    for model in args.model or default_models():
        times, samples = first_provider(model, runs)

        def median_ms(key: str, samples: list[dict[str, Any]] = samples) -> float:
            return round(statistics.median(float(s[key]) for s in samples) * 1000, 1)

        report(
            f"first get_provider({model!r}) in a fresh process",
            times,
            in_process_ms=median_ms("total_s"),
            load_plugins_ms=median_ms("load_s"),
            build_provider_ms=median_ms("provider_s"),
            new_modules=samples[0]["new_modules"],
            heavy_imports=samples[0]["heavy"],
            error=samples[0]["error"],
        )


if __name__ == "__main__":
    main()
