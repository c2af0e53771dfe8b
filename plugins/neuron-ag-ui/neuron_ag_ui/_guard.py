"""How the AG-UI server refuses a request: a JSON body `{"error": message}` with the status.

The guard itself is the one every server we start has
(`neuron_tool.http_guard.RequestGuard`: Host and Origin lists, the bearer
token on every request, a body limit); the endpoint refuses with this too.
"""

from __future__ import annotations

from typing import Final

from neuron_tool.http_guard import Refuse, json_refusal

__all__ = ["refuse"]

refuse: Final[Refuse] = json_refusal("ag-ui")
"""Answer `status` with the JSON body `{"error": message}`."""
