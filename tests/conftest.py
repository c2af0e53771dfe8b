"""Suite-wide setup: Ctrl-C for the commands the tests start, the `reliability` marker, and
no state database of the developer's own."""

from __future__ import annotations

import signal

import pytest

from tests._reliability import node_ids


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test the README's "What holds" table names (all its parameters too)."""
    named = node_ids()
    for item in items:
        if item.nodeid.split("[", 1)[0] in named:
            item.add_marker(pytest.mark.reliability)


def pytest_configure(config: pytest.Config) -> None:
    """Let the commands the tests start take Ctrl-C (SIGINT) as they would from a terminal.

    A suite started in the background by a shell without job control (`cmd &` in a
    script, `nohup`) runs with SIGINT ignored, and an ignored signal stays ignored
    across exec: the tests that press Ctrl-C on a command would wait for it forever.
    A signal the suite handles is reset to its default in each command it starts.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_state_url_of_the_developer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a `$NEURON_STATE_URL` set in the developer's shell out of every test.

    Why: it comes before `$NEURON_STATE_PATH`, so the commands the tests run
    would use the developer's database; a test that wants one sets its own.
    """
    monkeypatch.delenv("NEURON_STATE_URL", raising=False)
