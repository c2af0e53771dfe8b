"""The viewer's web application: its routes over a `layer0.TurnRecordReader`.

`/` lists the sessions with turn records, `/sessions/{id}` a session's
turns, `/turns` every turn, `/turns/{id}` one turn's page. It only reads:
give it a read-only store. `serve_viewer` adds the guard (token, Host
check) and serves it. A store that fails (a record that does not parse)
gets a page saying what failed.
"""

from __future__ import annotations

from typing import Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from layer0 import StateError, TurnRecordReader

from .guard import SECURITY_HEADERS
from .pages import error_page, not_found_page, sessions_page, turn_page, turns_page

__all__ = ["viewer_app"]

_LIMIT: Final = 200
_HEADERS: Final = {name.decode(): value.decode() for name, value in SECURITY_HEADERS}


def viewer_app(records: TurnRecordReader, *, where: str = "") -> Starlette:
    """Return the (unguarded) application showing `records`; `where` names the file on pages."""

    async def sessions(request: Request) -> HTMLResponse:
        found = await records.turn_sessions(limit=_LIMIT)
        return _html(sessions_page(found, where=where))

    async def every_turn(request: Request) -> HTMLResponse:
        found = await records.turn_summaries(limit=_LIMIT)
        return _html(turns_page(found, session=None, where=where))

    async def session_turns(request: Request) -> HTMLResponse:
        session = request.path_params["session"]
        found = await records.turn_summaries(session=session, limit=_LIMIT)
        if not found:
            return _html(
                not_found_page(f"No turns recorded for session {session}.", where=where), 404
            )
        return _html(turns_page(found, session=session, where=where))

    async def one_turn(request: Request) -> HTMLResponse:
        turn_id = request.path_params["turn_id"]
        record = await records.turn_record(turn_id)
        if record is None:
            return _html(not_found_page(f"No turn {turn_id} is recorded.", where=where), 404)
        return _html(turn_page(record, where=where))

    async def failed(request: Request, exc: Exception) -> HTMLResponse:
        # A record damaged, edited by hand or written by a newer version: say so,
        # with the headers every page has, rather than a bare "Internal Server Error".
        return _html(error_page(f"The state file could not be read: {exc}", where=where), 500)

    return Starlette(
        exception_handlers={StateError: failed},
        routes=[
            Route("/", sessions, methods=["GET", "HEAD"]),
            Route("/turns", every_turn, methods=["GET", "HEAD"]),
            Route("/sessions/{session:path}", session_turns, methods=["GET", "HEAD"]),
            Route("/turns/{turn_id}", one_turn, methods=["GET", "HEAD"]),
        ],
    )


def _html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page, status_code=status, headers=_HEADERS)
