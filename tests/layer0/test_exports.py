"""The core packages' public names resolve on first use (`layer0._exports`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = ["layer0", "neuron_hooks", "neuron_tool", "neuron_turn"]

# In a fresh interpreter: what importing the package loads, then what one name loads.
_PROBE = """
import sys
import {package} as package
before = set(sys.modules)
value = getattr(package, {name!r})
print({module!r} in before, {module!r} in sys.modules, vars(package)[{name!r}] is value)
"""


@pytest.mark.parametrize(
    ("package", "name", "module"),
    [
        ("layer0", "DelegateEffect", "layer0.effect"),
        ("neuron_hooks", "RedactionHook", "neuron_hooks.redaction"),
        ("neuron_turn", "NeuronTurn", "neuron_turn.loop.turn"),
    ],
)
def test_a_public_name_loads_its_module_when_first_read_and_is_kept(
    package: str, name: str, module: str
) -> None:
    probe = _PROBE.format(package=package, name=name, module=module)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert out.stdout.split() == ["False", "True", "True"]


def test_a_renamed_public_name_resolves_to_its_module_s_own() -> None:
    import layer0

    assert layer0.Decimal is layer0.Cost  # the reference's name for the cost type


@pytest.mark.parametrize("package", CORE)
def test_an_unknown_name_is_an_attribute_error_naming_the_package(package: str) -> None:
    module = __import__(package)

    with pytest.raises(AttributeError, match=rf"^module '{package}' has no attribute 'nope'$"):
        module.nope  # noqa: B018


@pytest.mark.parametrize("package", CORE)
def test_dir_lists_every_public_name_before_any_is_read(package: str) -> None:
    module = __import__(package)

    assert set(module.__all__) <= set(dir(module))
