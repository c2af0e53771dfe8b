"""The provider's name, in its errors and as the `RawPart.provider` it sends back."""

from __future__ import annotations

from typing import Final

PROVIDER: Final = "anthropic"
"""The provider name; also the `RawPart.provider` this plugin sends back."""
