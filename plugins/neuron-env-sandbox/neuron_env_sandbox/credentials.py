"""Where credential values come from: a spec only names them (`CredentialRef`).

The parent resolves each reference just before it starts the child and puts
the value where the reference's injection says: in the child's environment,
or in a file in its workspace. Values never enter the spec, the layer0 JSON
sent to the child, a repr or an error message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from .errors import MissingCredentialError

__all__ = ["CredentialSource", "EnvCredentials", "StaticCredentials"]


@runtime_checkable
class CredentialSource(Protocol):
    """Resolves a credential's name to its value, in the parent process."""

    async def resolve(self, name: str) -> str:
        """Return the value of credential `name`; raise `MissingCredentialError` if unknown."""
        ...


class EnvCredentials:
    """Credentials from the parent's environment variables, `prefix + name`.

    The default source: `CredentialRef(name="GITHUB_TOKEN", …)` takes the
    parent's `$GITHUB_TOKEN`. Nothing else of the parent's environment
    reaches the child.
    """

    def __init__(self, *, prefix: str = "") -> None:
        """Read credential `name` from the variable `prefix + name`."""
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"EnvCredentials(prefix={self.prefix!r})"

    async def resolve(self, name: str) -> str:
        """Return `$<prefix><name>`; raise `MissingCredentialError` if it is unset or empty."""
        value = os.environ.get(self.prefix + name)
        if not value:
            raise MissingCredentialError(name, source=f"the variable ${self.prefix}{name}")
        return value


class StaticCredentials:
    """Credentials from a mapping held in memory (a secrets manager's answer, a test)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        """Resolve names from `values`; they never appear in reprs or errors."""
        self._values = dict(values)

    def __repr__(self) -> str:
        return f"StaticCredentials(names={sorted(self._values)!r})"

    async def resolve(self, name: str) -> str:
        """Return the value of `name`; raise `MissingCredentialError` if it has none."""
        if name not in self._values:
            raise MissingCredentialError(name, source=repr(self))
        return self._values[name]
