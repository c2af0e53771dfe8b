"""neuron-ag-ui: serve an agent of a `layer0.Orchestrator` over AG-UI.

AG-UI is the event protocol between agent backends and frontends (CopilotKit,
the `@ag-ui/client` `HttpAgent`). `serve_ag_ui(orchestrator, agent)` serves
one agent with the official `ag-ui-protocol` types, as pydantic-ai's
`agent.to_ag_ui()` does: a POSTed `RunAgentInput` becomes a turn on the
session of its thread, answered as a stream of AG-UI events (text, the
server's tool calls and results, the run's end); the client's own tools
(frontend tools) are offered to the model and handed to the client to run;
calls held for approval end the run as interrupts; the frontend's shared state
and context reach the tools (`shared_state`, `frontend_context`) and the model
(`frontend_instructions`), and tools send state back (`send_state`,
`send_state_delta`); a run that finishes or pauses sends a MESSAGES_SNAPSHOT
of its conversation under the ids its events used. Every request needs the
bearer token, and the Host and Origin headers are checked. `ag_ui_app` gives
the guarded ASGI app; `AgUiRunner` the runs' events, for a server of one's own.
"""

from ._events import APPROVAL_EVENT, APPROVAL_REASON, HOSTED_CALL_EVENT
from ._input import DECISIONS_PROP
from .errors import (
    AgUiError,
    EmptyMessageError,
    InvalidDecisionsError,
    InvalidRunInputError,
    InvalidThreadError,
    MessageTooLargeError,
    ServerBusyError,
    UnsupportedPartError,
)
from .limits import RunLimits
from .runner import AgUiRunner
from .server import RUN_PATH, ag_ui_app, serve_ag_ui
from .state import (
    ContextEntry,
    StateError,
    frontend_context,
    frontend_instructions,
    send_state,
    send_state_delta,
    shared_state,
)

__all__ = [
    "APPROVAL_EVENT",
    "APPROVAL_REASON",
    "DECISIONS_PROP",
    "HOSTED_CALL_EVENT",
    "RUN_PATH",
    "AgUiError",
    "AgUiRunner",
    "ContextEntry",
    "EmptyMessageError",
    "InvalidDecisionsError",
    "InvalidRunInputError",
    "InvalidThreadError",
    "MessageTooLargeError",
    "RunLimits",
    "ServerBusyError",
    "StateError",
    "UnsupportedPartError",
    "ag_ui_app",
    "frontend_context",
    "frontend_instructions",
    "send_state",
    "send_state_delta",
    "serve_ag_ui",
    "shared_state",
]
