"""MCP sampling on the command line: the servers' requests, answered by the run's own model.

The MCP servers connect before the turn (and its provider) is built, so the
handler they are given is bound to the provider afterwards; a request before
then is refused, saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuron_tool.mcp import SamplingAnswer, SamplingRequest

    from ..loop.mcp_sampling import ProviderSampler
    from ..loop.provider import Provider


class LateSampler:
    """A sampling handler answering with a `ProviderSampler` over the run's provider, once built."""

    def __init__(self) -> None:
        """Refuse requests until `answer_with` names the provider."""
        self._sampler: ProviderSampler | None = None

    def __repr__(self) -> str:
        return f"LateSampler({self._sampler!r})"

    def answer_with(self, provider: Provider) -> None:
        """Answer the servers' requests with `provider`'s default model, within the defaults."""
        from ..loop.mcp_sampling import ProviderSampler

        self._sampler = ProviderSampler(provider)

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        """Answer `request` with the run's model.

        Raises:
            SamplingRefused: the run's model is not built yet.
        """
        if self._sampler is None:
            from neuron_tool.mcp import SamplingRefused

            raise SamplingRefused("the command line's model is not ready yet; ask again")
        return await self._sampler(request)
