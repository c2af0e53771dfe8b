"""The viewer's errors: one base class, a subclass per thing that can go wrong."""

from __future__ import annotations

__all__ = ["ViewerError", "ViewerSetupError"]


class ViewerError(Exception):
    """Base of the errors the viewer raises."""


class ViewerSetupError(ViewerError, ValueError):
    """The viewer cannot serve as asked (a bad token, a wide bind without a host name)."""
