"""The viewer's pages, rendered on the server as HTML with a little inline CSS and no script.

Everything that comes from a turn (prompts, model text, tool input and
output, error messages, ids) is hostile: it passes through `html.escape`
before it reaches a page, in text and in attributes alike, so a
`<script>` a model wrote is shown as text. Images are shown inline only
under the rules of `_images`; documents and the other files are named.
A turn's texts are cut as `_text` says, so a huge turn still makes a page
a browser draws.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from typing import Final
from urllib.parse import quote

from pydantic import JsonValue

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    Effect,
    ExitReason,
    LogEffect,
    SessionTurns,
    TurnRecord,
    TurnSummary,
)

from ..loop._convert import RAW_TYPE, THINKING_TYPE, TOOL_FILES_TYPE
from ..loop._exit_text import exit_reason_text
from ..loop._file_names import file_named, tool_files_named
from ._images import Figure, ImageAllowance, shown_image
from ._text import TextAllowance, shown_text
from .waterfall import Bar, Marker, Waterfall, waterfall

__all__ = ["error_page", "not_found_page", "sessions_page", "turn_page", "turns_page"]

_LONGEST_SHOWN: Final = 300
"""The most characters of one string of a provider's part a page shows."""
_NOTHING_YET: Final = "No turns recorded yet: run one with <code>neuron-turn run</code>."
_STYLE: Final = """
body{font:14px/1.45 system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:0;color:#1f2328;
background:#f6f8fa}
header{background:#24292f;color:#fff;padding:10px 24px}header a{color:#fff;text-decoration:none}
header .where{color:#9da7b1;margin-left:12px;font-size:12px}
main{padding:16px 24px;max-width:1200px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:24px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #d0d7de;vertical-align:top}
th{background:#eaeef2;font-weight:600}td.num{text-align:right;white-space:nowrap}
code,pre{font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #d0d7de;
padding:8px;margin:4px 0}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px}
.fact{background:#fff;border:1px solid #d0d7de;padding:6px 10px}
.fact b{display:block;font-size:11px;color:#59636e;font-weight:600}
.status-executed,.status-accepted{color:#1a7f37}.status-refused,.status-failed{color:#cf222e}
.error{background:#ffebe9;border:1px solid #ff8182;padding:8px}
.wf{background:#fff;border:1px solid #d0d7de}
.wf-row{display:grid;grid-template-columns:220px 1fr 320px;border-bottom:1px solid #eaeef2;
align-items:center;min-height:26px}
.wf-label{padding:2px 8px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.wf-track{position:relative;height:18px;background:repeating-linear-gradient(90deg,#fff 0,
#fff 10%,#f0f3f6 10%,#f0f3f6 10.2%)}
.wf-bar{position:absolute;top:2px;height:14px;border-radius:2px}
.wf-model{background:#8250df}.wf-tool{background:#1f883d}.wf-tool-error{background:#cf222e}
.wf-mark{position:absolute;top:0;width:2px;height:18px;background:#bf8700}
.wf-mark-hook_halt,.wf-mark-limit{background:#cf222e}
.wf-nums{padding:2px 8px;font-size:12px;color:#59636e}
.wf-head{font-size:11px;color:#59636e}
details{padding:0 8px 6px 228px}summary{cursor:pointer;color:#0969da;font-size:12px}
.msg{background:#fff;border:1px solid #d0d7de;margin:6px 0;padding:6px 10px}
.msg b{font-size:11px;color:#59636e;text-transform:uppercase}
pre.thinking{color:#59636e;font-style:italic;background:#f6f8fa}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
.legend .mark{width:3px;background:#bf8700}
figure.image{margin:6px 0}figure.image img{display:block;max-width:min(100%,640px);
max-height:480px;border:1px solid #d0d7de;background:#fff}
figure.image figcaption{font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace;color:#59636e}
"""


def sessions_page(sessions: Sequence[SessionTurns], *, where: str) -> str:
    """The first page: every session with turn records, most recently used first."""
    rows = [
        _row(
            _link(_session_href(s.session), s.session or "(no session)"),
            escape(s.title),
            f'<span class="num">{s.turns}</span>',
            escape(s.updated[:19].replace("T", " ")),
        )
        for s in sessions
    ]
    body = (
        "<h1>Sessions</h1>"
        + _table(("session", "first prompt", "turns", "last turn (UTC)"), rows)
        + (
            ""
            if rows
            else "<p>No turns recorded yet: run one with <code>neuron-turn run</code>.</p>"
        )
        + f"<p>{_link('/turns', 'All turns, newest first')}</p>"
    )
    return _page("Sessions", body, where=where)


def turns_page(summaries: Sequence[TurnSummary], *, session: str | None, where: str) -> str:
    """A session's turns (or every session's, when `session` is None), newest first."""
    title = "All turns" if session is None else f"Session {session}"
    rows = [
        _row(
            _link(f"/turns/{quote(s.turn_id, safe='')}", s.turn_id[:12]),
            escape(s.started[:19].replace("T", " ")),
            escape(s.session or "-"),
            escape(s.title),
            _status(s.status, s.exit_reason),
            f'<span class="num">{s.tokens_in} / {s.tokens_out}</span>',
            f'<span class="num">{_money(s.cost)}</span>',
            f'<span class="num">{s.duration / 1000:.2f}s</span>',
        )
        for s in summaries
    ]
    body = f"<h1>{escape(title)}</h1>" + _table(
        ("turn", "started (UTC)", "session", "prompt", "outcome", "tokens", "cost", "time"), rows
    )
    return _page(title, body, where=where)


def turn_page(record: TurnRecord, *, where: str) -> str:
    """One turn: its facts, its waterfall, its messages and its effects."""
    title = f"Turn {record.turn_id}"
    texts = TextAllowance(record.turn_id)
    parts = [f"<h1>{escape(title)}</h1>", _facts(record)]
    if record.error:
        parts.append(f'<p class="error">{shown_text(record.error, texts)}</p>')
    parts.append("<h2>Timeline</h2>")
    parts.append(_waterfall(waterfall(record), texts) if record.timeline else _no_timeline(record))
    parts.append("<h2>Messages</h2>")
    parts.extend(_messages(record, ImageAllowance(), texts))
    effects = [] if record.output is None else [e for e in record.output.effects if not _history(e)]
    parts.append(f"<h2>Effects ({escape(record.status)})</h2>")
    parts.append("".join(_effect(e, texts) for e in effects) or "<p>None declared.</p>")
    return _page(title, "".join(parts), where=where, session=record.session)


def not_found_page(what: str, *, where: str) -> str:
    """The page for a turn or session that is not recorded."""
    return _page("Not found", f"<h1>Not found</h1><p>{escape(what)}</p>", where=where)


def error_page(what: str, *, where: str) -> str:
    """The page for what the store failed to give (a record that does not parse)."""
    return _page(
        "Cannot be shown",
        f'<h1>Cannot be shown</h1><p class="error">{escape(what)}</p>',
        where=where,
    )


def _page(title: str, body: str, *, where: str, session: str | None = None) -> str:
    crumbs = [_link("/", "Sessions")]
    if session is not None:
        crumbs.append(_link(_session_href(session), f"session {session}"))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} · neuron-turn</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<header><b>{_link('/', 'neuron-turn')}</b> · {' / '.join(crumbs)}"
        f'<span class="where">{escape(where)}</span></header>'
        f"<main>{body}</main></body></html>"
    )


def _facts(record: TurnRecord) -> str:
    facts = [
        ("status", _status(record.status, None)),
        ("started (UTC)", escape(record.started[:23].replace("T", " "))),
        ("session", escape(record.session or "-")),
        ("agent", escape(record.agent)),
        ("workflow", escape(record.workflow_id)),
    ]
    output = record.output
    if output is not None:
        meta = output.metadata
        facts += [
            ("exit", escape(exit_reason_text(output.exit_reason))),
            ("model calls", str(meta.turns_used)),
            ("tokens in / out", f"{meta.tokens_in} / {meta.tokens_out}"),
            ("cost", _money(meta.cost)),
            ("duration", f"{meta.duration / 1000:.3f}s"),
            ("tool calls", str(len(meta.tools_called))),
        ]
    cells = "".join(f'<div class="fact"><b>{name}</b>{value}</div>' for name, value in facts)
    return f'<div class="facts">{cells}</div>'


def _waterfall(fall: Waterfall, texts: TextAllowance) -> str:
    head = (
        '<div class="wf-row wf-head"><div class="wf-label">call</div>'
        f'<div class="wf-label">0 → {fall.span / 1000:.3f}s</div>'
        '<div class="wf-nums">start · duration · tokens · cost</div></div>'
    )
    rows = [head, *(_bar_row(bar, texts) for bar in fall.bars)]
    rows.extend(_marker_row(marker, texts) for marker in fall.markers)
    legend = (
        '<p class="legend"><i class="wf-model"></i>model call'
        '<i class="wf-tool"></i>tool call<i class="wf-tool-error"></i>failed tool call'
        '<i class="mark"></i>effect, halt or limit</p>'
    )
    return f'<div class="wf" id="waterfall">{"".join(rows)}</div>{legend}'


def _bar_row(bar: Bar, texts: TextAllowance) -> str:
    numbers = [f"+{bar.start / 1000:.3f}s", f"{bar.duration / 1000:.3f}s"]
    if bar.kind == "model":
        numbers += [bar.tokens, bar.cost, bar.detail]
    else:
        numbers.append(bar.detail)
    label = shown_text(bar.label, texts)
    row = (
        f'<div class="wf-row" data-kind="{bar.kind}">'
        f'<div class="wf-label" title="{label}">{label}</div>'
        f'<div class="wf-track"><div class="wf-bar wf-{bar.kind}" '
        f'style="left:{bar.left}%;width:{bar.width}%"></div></div>'
        f'<div class="wf-nums">{escape(" · ".join(numbers))}</div></div>'
    )
    if bar.kind == "model":
        return row
    cut = " (cut; the history holds it whole)" if bar.truncated else ""
    return (
        row + f"<details><summary>input and output{cut}</summary>"
        f"<pre>{shown_text(_json(bar.input), texts)}</pre>"
        f"<pre>{shown_text(bar.output, texts)}</pre></details>"
    )


def _marker_row(marker: Marker, texts: TextAllowance) -> str:
    label = shown_text(marker.label, texts)
    return (
        f'<div class="wf-row" data-kind="{marker.kind}">'
        f'<div class="wf-label" title="{label}">{label}</div>'
        f'<div class="wf-track"><div class="wf-mark wf-mark-{marker.kind}" '
        f'style="left:{marker.left}%"></div></div>'
        f'<div class="wf-nums">+{marker.at / 1000:.3f}s</div></div>'
    )


def _no_timeline(record: TurnRecord) -> str:
    if record.output is None:
        return "<p>The turn failed before it returned anything.</p>"
    return "<p>This turn kept no timeline (it is not a NeuronTurn).</p>"


def _messages(record: TurnRecord, images: ImageAllowance, texts: TextAllowance) -> list[str]:
    """The turn's messages from its history append, else its input and answer."""
    output = record.output
    appended = [] if output is None else [e for e in output.effects if _history(e)]
    if appended:
        data = appended[0].data if isinstance(appended[0], CustomEffect) else None
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(messages, list):
            return [_message(m, images, texts) for m in messages]
    question = record.input.message.model_dump(mode="json")
    shown = [_message({"role": "user", "content": question}, images, texts)]
    if output is not None:
        answer = output.message.model_dump(mode="json")
        shown.append(_message({"role": "assistant", "content": answer}, images, texts))
    return shown


def _message(message: JsonValue, images: ImageAllowance, texts: TextAllowance) -> str:
    """One message of a turn; `images` and `texts` are what its page may still show."""
    if not isinstance(message, dict):
        return f'<div class="msg"><pre>{shown_text(_json(message), texts)}</pre></div>'
    role = message.get("role")
    content = message.get("content")
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    body = "".join(_block(block, images, texts) for block in blocks)
    return f'<div class="msg"><b>{shown_text(str(role), texts)}</b>{body}</div>'


def _block(block: JsonValue, images: ImageAllowance, texts: TextAllowance) -> str:
    if isinstance(block, str):
        return f"<pre>{shown_text(block, texts)}</pre>"
    if not isinstance(block, dict):
        return f"<pre>{shown_text(_json(block), texts)}</pre>"
    kind = block.get("type")
    if kind == "text":
        return f"<pre>{shown_text(str(block.get('text', '')), texts)}</pre>"
    if kind == "tool_use":
        call = f"calls {block.get('name')}({_json(block.get('input'))})"
        return f"<pre>{shown_text(call, texts)}</pre>"
    if kind == "tool_result":
        marker = "error" if block.get("is_error") else "result"
        content = block.get("content")
        text = content if isinstance(content, str) else _json(content)
        return f"<pre>{shown_text(f'[{marker}] {text}', texts)}</pre>"
    if kind == "image":
        image = shown_image(block, images)
        return (
            image.html
            if isinstance(image, Figure)
            else f"<pre>{shown_text(str(image), texts)}</pre>"
        )
    if kind == "custom":
        shown = _custom_block(block.get("content_type"), block.get("data"), images, texts)
        if shown is not None:
            return shown
    named = file_named(block)
    if named is not None:
        return f"<pre>{shown_text(named, texts)}</pre>"
    return f"<pre>{shown_text(_json(block), texts)}</pre>"


def _custom_block(
    content_type: JsonValue, data: JsonValue, images: ImageAllowance, texts: TextAllowance
) -> str | None:
    """A block of ours: tool files shown, thinking as text, a provider's part by its kind."""
    if content_type == TOOL_FILES_TYPE:
        return _tool_files(data, images, texts)
    if not isinstance(data, dict):
        return None
    thinking = data.get("thinking")
    if content_type == THINKING_TYPE and isinstance(thinking, str):
        # The signature is opaque to a reader; the thinking is what the model wrote.
        return f'<pre class="thinking">{shown_text("[thinking] " + thinking, texts)}</pre>'
    provider, part = data.get("provider"), data.get("data")
    if content_type == RAW_TYPE and isinstance(provider, str):
        kind = part.get("type") if isinstance(part, dict) else None
        label = f"[{provider} {kind if isinstance(kind, str) else 'part'}]"
        return f"<pre>{shown_text(label + ' ' + _json(_elided(part)), texts)}</pre>"
    return None


def _tool_files(data: JsonValue, images: ImageAllowance, texts: TextAllowance) -> str:
    """The files a tool returned: images shown as `_images` allows, the rest named on one line.

    Never dumped: a document's bytes (an image's not shown) are megabytes of base64.
    """
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return f"<pre>{shown_text(tool_files_named(data), texts)}</pre>"
    shown: list[str] = []
    named: list[str] = []
    for file in files:
        image = shown_image(file, images)
        if isinstance(image, Figure):
            shown += [_names(named, texts), image.html]
            named = []
        else:
            named.append(image or file_named(file) or "[unreadable file]")
    return "".join([*shown, _names(named, texts)])


def _names(names: list[str], texts: TextAllowance) -> str:
    """Files named on one line, as `history` names them; nothing for none."""
    return f"<pre>{shown_text(' '.join(names), texts)}</pre>" if names else ""


def _elided(value: JsonValue) -> JsonValue:
    """`value` with each long string cut: a provider's encrypted or base64 payloads say nothing."""
    if isinstance(value, str) and len(value) > _LONGEST_SHOWN:
        return f"{value[:_LONGEST_SHOWN]}… ({len(value)} characters)"
    if isinstance(value, list):
        return [_elided(item) for item in value]
    if isinstance(value, dict):
        return {key: _elided(item) for key, item in value.items()}
    return value


def _effect(effect: Effect, texts: TextAllowance) -> str:
    if isinstance(effect, LogEffect):
        summary = f"log ({effect.level.value}): {effect.message}"
    elif isinstance(effect, CustomEffect):
        summary = f"custom: {effect.effect_type}"
    else:
        summary = effect.type
    detail = shown_text(_json(effect.model_dump(mode="json")), texts)
    return f'<div class="msg"><b>{shown_text(summary, texts)}</b><pre>{detail}</pre></div>'


def _history(effect: Effect) -> bool:
    return isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY


def _status(status: str, reason: ExitReason | None) -> str:
    text = status if reason is None else f"{exit_reason_text(reason)} · {status}"
    return f'<span class="status-{escape(status)}">{escape(text)}</span>'


def _money(cost: object) -> str:
    amount = getattr(cost, "amount", None)
    return "-" if amount is None else f"${amount:.4f}"


def _session_href(session: str | None) -> str:
    return "/turns" if session is None else f"/sessions/{quote(session, safe='')}"


def _link(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def _row(*cells: str) -> str:
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def _table(headings: Iterable[str], rows: Sequence[str]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
