"""How the `neuron-turn` process ends: normally, or past a Rust runtime that crashes teardown.

Temporal's Python SDK runs its client and worker on a Tokio runtime whose
threads can call into Python while the interpreter finalizes; now and then the
process then dies with `PyGILState_Release: thread state ... must be current`
(SIGABRT) or a SIGSEGV after everything it had to do is done
(temporalio/sdk-python#300, still open). A command that finished must not
report a crash, so when such an extension is loaded the process does what
finalization would do for our data — stops its thread pools, joins its
non-daemon threads, runs the `atexit` handlers (the SQLite store's writer,
log and span exporters), flushes stdout and stderr — and leaves with
`os._exit`, never tearing the runtime down.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Final, NoReturn

__all__ = ["end_process"]

FINALIZATION_UNSAFE: Final = frozenset({"temporalio.bridge.temporal_sdk_bridge"})
"""Extension modules whose threads may crash interpreter teardown once loaded."""
_FLUSH_FAILED: Final = 120
"""CPython's exit status when flushing the standard streams at exit fails."""


def end_process(code: int) -> NoReturn:
    """End the process with `code`, skipping teardown only when a loaded extension crashes it."""
    if FINALIZATION_UNSAFE.isdisjoint(sys.modules):
        sys.exit(code)
    # What finalization does first: stop the thread pools (their `threading`
    # exit hooks) and join every non-daemon thread. Joining without the hooks
    # would wait forever on an idle executor's workers.
    threading._shutdown()  # type: ignore[attr-defined]
    # atexit's own runner: it calls each handler once, last registered first,
    # and prints a failing handler's traceback as teardown would.
    atexit._run_exitfuncs()
    os._exit(_flushed(code))


def _flushed(code: int) -> int:
    """Flush stdout and stderr; a failed flush turns success into 120, as teardown does."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except OSError:
            # The reader went away (a closed pipe): nothing is left to tell it.
            code = code or _FLUSH_FAILED
    return code
