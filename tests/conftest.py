"""Suite-wide collection: the `reliability` marker goes to the tests the README names."""

from __future__ import annotations

import pytest

from tests._reliability import node_ids


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test the README's "What holds" table names (all its parameters too)."""
    named = node_ids()
    for item in items:
        if item.nodeid.split("[", 1)[0] in named:
            item.add_marker(pytest.mark.reliability)
