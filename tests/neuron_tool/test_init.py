from __future__ import annotations

import neuron_tool
from neuron_tool.decorator import tool
from neuron_tool.permission import permission
from neuron_tool.timeout import timeout


def test_all_names_every_public_export() -> None:
    # Its order is checked for every package in tests/test_public_api.py.
    for name in neuron_tool.__all__:
        assert getattr(neuron_tool, name) is not None


def test_functions_named_like_their_modules_win_on_the_package() -> None:
    # `neuron_tool.tool` etc. must be the functions, not the submodules they live next to.
    assert neuron_tool.tool is tool
    assert neuron_tool.timeout is timeout
    assert neuron_tool.permission is permission
