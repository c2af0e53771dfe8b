"""`neuron-turn` ends past the Temporal runtime's teardown crash and loses nothing doing so."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import atexit, sys, threading
    from concurrent.futures import ThreadPoolExecutor
    {load}
    from neuron_turn.cli._process_end import end_process

    class Finalized:
        def __del__(self):
            print("finalized", flush=True)

    kept = Finalized()
    go = threading.Event()

    def late_writer():
        go.wait()
        print("thread done")

    threading.Thread(target=late_writer).start()
    atexit.register(lambda: print("atexit ran"))
    pool = ThreadPoolExecutor(1)
    pool.submit(print, "pooled").result()
    print("buffered")
    go.set()
    end_process(3)
    """
)


def run_child(load: str) -> subprocess.CompletedProcess[str]:
    """Run the child with `load` as its extra import; stdout is a pipe, so it is block-buffered."""
    return subprocess.run(
        [sys.executable, "-c", CHILD.format(load=load)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_with_temporal_loaded_teardown_is_skipped_but_threads_handlers_and_output_kept() -> None:
    done = run_child("import temporalio.bridge.temporal_sdk_bridge")
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines() == ["pooled", "buffered", "thread done", "atexit ran"]
    assert done.stderr == ""


def test_without_such_an_extension_the_process_ends_through_normal_teardown() -> None:
    done = run_child("")
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines() == [
        "pooled",
        "buffered",
        "thread done",
        "atexit ran",
        "finalized",
    ]
