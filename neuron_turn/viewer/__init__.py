"""The local web viewer of turn records (`neuron-turn ui`): sessions, turns, waterfalls.

It reads a `layer0.TurnRecordReader` (a read-only store) and never writes:
`/` lists sessions, `/sessions/{id}` and `/turns` list turns, `/turns/{id}`
draws one turn's model and tool calls as a waterfall with their tokens, cost
and durations, its messages and its effects. Pages are server-rendered HTML
with inline CSS and no script; every value from a turn is escaped. It is
served on loopback behind a token (`guard`), with Starlette and uvicorn (which
come with `mcp`). It sits between the plugin system and the command line.
"""

from .app import viewer_app
from .errors import ViewerError, ViewerSetupError
from .server import serve_viewer
from .waterfall import Bar, Marker, Waterfall, waterfall

__all__ = [
    "Bar",
    "Marker",
    "ViewerError",
    "ViewerSetupError",
    "Waterfall",
    "serve_viewer",
    "viewer_app",
    "waterfall",
]
