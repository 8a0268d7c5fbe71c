"""Export of a session as one self-contained web page.

The page shows the current branch as a chat and holds the whole tree: every
entry is rendered once, in Python, into the page; a little inline script
puts the entries of one path into the chat and switches paths when the
reader picks another alternative (the ``‹ 1/2 ›`` beside a message with
siblings) or another branch in the tree sidebar. Without scripts the page
still shows the current branch.

Nothing is loaded from anywhere: inline CSS (Pygments' colours for code),
images and audio players as ``data:`` URLs, a PDF as a ``data:`` download link, no fonts or scripts from the network (the page's
Content-Security-Policy says so too). Every piece of session text is
escaped: assistant text is rendered as Markdown with raw HTML off (so a
reply holding ``<script>`` shows it), user text and tool output are shown as
written; bidi controls are shown as visible markers.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from html import escape as escape_html
from typing import Any

from core.sanitize import strip_control
from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message
from core.sessions.note import depth_words
from core.sessions.persistence import Blob, SessionInfo

SNIPPET = 48
HINT_CHARS = 60
"""Longest argument shown beside a folded tool call's name."""
_MEDIA_TYPE = re.compile(r"image/[a-z0-9.+-]+\Z")
_AUDIO_TYPE = re.compile(r"audio/[a-z0-9.+-]+\Z")


def to_html(
    info: SessionInfo,
    entries: Sequence[Entry],
    labels: Mapping[str, str],
    blobs: Mapping[str, Blob],
) -> str:
    """The page for the session (the whole tree, opened on ``info.leaf_id``)."""
    by_id = {entry.id: entry for entry in entries}
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.parent_id in by_id else None
        children.setdefault(parent, []).append(entry)
    path = _path(by_id, info.leaf_id)
    on_path = {entry.id for entry in path}
    tool_names = {
        block.id: block.name
        for entry in entries
        if entry.message is not None
        for block in entry.message.content
        if isinstance(block, ToolCallContent)
    }
    rendered = {
        entry.id: _entry(entry, labels.get(entry.id), tool_names, blobs) for entry in entries
    }
    chat = "".join(rendered[entry.id] for entry in path)
    stored = "".join(html for entry_id, html in rendered.items() if entry_id not in on_path)
    title = info.title or "Untitled session"
    page = _PAGE.format(
        title=escape(title),
        heading=escape(title),
        meta=escape(f"{info.created_at[:16].replace('T', ' ')} · {len(entries)} entries"),
        leaf=escape(info.leaf_id or "", quote=True),
        css=_CSS + _code_css(),
        script=_SCRIPT,
        chat=chat,
        stored=stored,
        tree=_tree(children, on_path, info.leaf_id),
    )
    return page


def _path(by_id: Mapping[str, Entry], leaf_id: str | None) -> list[Entry]:
    path = []
    node = by_id.get(leaf_id) if leaf_id else None
    while node is not None:
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    return path[::-1]


def escape(text: str, quote: bool = True) -> str:
    """Text for the page, HTML-escaped and without control sequences (the page
    may be read with ``cat``); bidi controls become visible markers, so text
    cannot be reordered to read other than it is (Trojan Source)."""
    return escape_html(strip_control(text), quote)


# --- the tree sidebar ---------------------------------------------------------


def _tree(children: Mapping[str | None, list[Entry]], on_path: set[str], leaf: str | None) -> str:
    """Every entry in depth-first order, indented one step at each fork."""
    rows: list[str] = []
    stack: list[tuple[Entry, int]] = [(e, 0) for e in reversed(children.get(None, []))]
    forked_roots = len(children.get(None, [])) > 1
    while stack:
        entry, depth = stack.pop()
        kids = children.get(entry.id, [])
        step = 1 if len(kids) > 1 else 0
        stack.extend((kid, depth + step) for kid in reversed(kids))
        classes = ["node"]
        if entry.id in on_path:
            classes.append("on-path")
        if entry.id == leaf:
            classes.append("current")
        if not kids:
            classes.append("end")
        indent = depth + (1 if forked_roots else 0)
        rows.append(
            f'<li class="{" ".join(classes)}" style="--depth:{indent}">'
            f'<button type="button" data-go="{escape(entry.id, quote=True)}">'
            f"{_tree_label(entry)}</button></li>"
        )
    return "".join(rows)


def _tree_label(entry: Entry) -> str:
    payload = entry.payload
    if isinstance(payload, Compaction):
        return '<span class="who">compaction</span>'
    if isinstance(payload, BranchSummary):
        return '<span class="who">branch summary</span>'
    if isinstance(payload, ModelChange):
        return f'<span class="who">model</span> {escape(_short(payload.model))}'
    if isinstance(payload, Note):
        return f'<span class="who">note</span> {escape(_short(payload.text or "off"))}'
    who = {"tool_result": "tool", "custom": "note"}.get(payload.role, payload.role)
    text = payload.text or " ".join(
        b.name for b in payload.content if isinstance(b, ToolCallContent)
    )
    return f'<span class="who">{escape(who)}</span> {escape(_short(text))}'


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


# --- entries -------------------------------------------------------------------


def _entry(
    entry: Entry, label: str | None, tool_names: Mapping[str, str], blobs: Mapping[str, Blob]
) -> str:
    payload = entry.payload
    if isinstance(payload, Compaction):
        kind, who = "compaction", "Compaction"
        body = _details(
            f"Earlier messages summarized ({payload.tokens_before:,} tokens)",
            _markdown(payload.summary),
            "summary",
        )
    elif isinstance(payload, BranchSummary):
        kind, who = "branch-summary", "Branch summary"
        body = _details("Summary of a branch left", _markdown(payload.summary), "summary")
    elif isinstance(payload, ModelChange):
        kind, who = "model-change", "Model"
        thinking = f", thinking {payload.thinking}" if payload.thinking != "off" else ""
        body = f'<p class="note">{escape(payload.model + thinking)}</p>'
    elif isinstance(payload, Note):
        kind, who = "pinned-note", "Note"
        body = (
            f'<p class="note">pinned {depth_words(payload.depth)} from the end of every request</p>'
            + _markdown(payload.text)
            if payload.active
            else '<p class="note">the note was removed</p>'
        )
    else:
        kind, who, body = _message(payload, tool_names, blobs)
    tag = f'<span class="label">{escape(label)}</span>' if label else ""
    return (
        f'<article class="entry {kind}" id="e-{escape(entry.id, quote=True)}" '
        f'data-id="{escape(entry.id, quote=True)}" '
        f'data-parent="{escape(entry.parent_id or "", quote=True)}">'
        f'<header><span class="who">{escape(who)}</span>{tag}'
        f"<time>{escape(entry.created_at[:19].replace('T', ' '))}</time>"
        f'<span class="alts"></span></header>{body}</article>'
    )


def _message(
    message: Message, tool_names: Mapping[str, str], blobs: Mapping[str, Blob]
) -> tuple[str, str, str]:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if message.role == "assistant":
                parts.append(f'<div class="md">{_markdown(block.text)}</div>')
            else:
                parts.append(f'<div class="plain">{escape(block.text)}</div>')
        elif isinstance(block, ThinkingContent):
            text = "(redacted)" if block.redacted and not block.text else block.text
            parts.append(
                _details("Thinking", f'<div class="plain">{escape(text)}</div>', "thinking")
            )
        elif isinstance(block, ToolCallContent):
            arguments = json.dumps(block.arguments, indent=2, ensure_ascii=False)
            parts.append(
                _details(
                    f"Tool call: {block.name}{_call_hint(block.arguments)}",
                    f"<pre>{escape(arguments)}</pre>",
                    "tool-call",
                )
            )
        elif isinstance(block, ToolResultContent):
            name = tool_names.get(block.tool_call_id, "tool")
            inner = "".join(
                _image(b, blobs) if isinstance(b, ImageContent) else f"<pre>{escape(b.text)}</pre>"
                for b in block.content
            )
            state = " (error)" if block.is_error else ""
            kind = "tool-result error" if block.is_error else "tool-result"
            parts.append(_details(f"Result of {name}{state}", inner, kind))
        elif isinstance(block, ImageContent):
            parts.append(_image(block, blobs))
        elif isinstance(block, FileContent):
            parts.append(_file(block, blobs))
    if message.error:
        parts.append(f'<p class="error">{escape(message.error)}</p>')
    who = {
        "user": "You",
        "assistant": (
            f"{message.agent} ({message.model})"
            if message.agent and message.model
            else message.agent or message.model or "Assistant"
        ),
        "system": "System",
        "tool_result": "Tool",
        "custom": "Note",
    }[message.role]
    body = "".join(parts)
    if message.role == "system":
        body = _details("System prompt", body, "system")
    return message.role.replace("_", "-"), who, body


def _call_hint(arguments: Mapping[str, Any]) -> str:
    """`` · `` and the call's first text argument, shortened to one line (a
    path, a command), so a folded call says what it does."""
    text = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), "")
    line = text.strip().splitlines()[0] if text.strip() else ""
    if not line:
        return ""
    return " · " + (line if len(line) <= HINT_CHARS else line[: HINT_CHARS - 1] + "…")


def _details(summary: str, body: str, kind: str) -> str:
    return f'<details class="{kind}"><summary>{escape(summary)}</summary>{body}</details>'


def _image(block: ImageContent, blobs: Mapping[str, Blob]) -> str:
    blob = blobs.get(block.sha256)
    if blob is None or not _MEDIA_TYPE.match(blob.media_type):
        return f'<p class="note">[{escape(block.describe())}: not in the database]</p>'
    data = base64.b64encode(blob.data).decode("ascii")
    return (
        f'<img src="data:{blob.media_type};base64,{data}" width="{int(blob.width)}" '
        f'height="{int(blob.height)}" alt="{escape(block.describe(), quote=True)}">'
    )


def _file(block: FileContent, blobs: Mapping[str, Blob]) -> str:
    """Audio as a player, a PDF as a link that saves it under its name; both
    carry their bytes as a ``data:`` URL."""
    blob = blobs.get(block.sha256)
    caption = escape(block.describe())
    if blob is None:
        return f'<p class="note">[{caption}: not in the database]</p>'
    data = base64.b64encode(blob.data).decode("ascii")
    if _AUDIO_TYPE.match(blob.media_type):
        return (
            f'<figure class="file"><audio controls preload="metadata" '
            f'src="data:{blob.media_type};base64,{data}"></audio>'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    if blob.media_type == "application/pdf":
        return (
            f'<p class="file"><a download="{escape(block.name, quote=True)}" '
            f'href="data:application/pdf;base64,{data}">{caption}</a></p>'
        )
    return f'<p class="note">[{caption}]</p>'


# --- Markdown and code ------------------------------------------------------------


@lru_cache(maxsize=1)
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    # Raw HTML off: a reply's <script> is text. Links keep markdown-it's own
    # check (no javascript: URLs).
    return (
        MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
        .enable("table")
        .enable("strikethrough")
    )


def _markdown(text: str) -> str:
    return _renderer().render(strip_control(text))


def _highlight(code: str, language: str, _attrs: Any) -> str:
    """Pygments' spans for a fenced block ("" leaves it to markdown-it to escape)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if not language:
        return ""
    try:
        lexer = get_lexer_by_name(language.split()[0])
    except ClassNotFound:
        return ""
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


@lru_cache(maxsize=1)
def _code_css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="friendly").get_style_defs(".md pre code")


_CSS = """
:root { --fg: #1d1f21; --muted: #6a6f75; --line: #d9dde2; --accent: #3465a4;
  --user: #eef3fb; --bot: #ffffff; --side: #f6f7f9; --note: #fff8e5; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: #f0f2f5; display: flex; min-height: 100vh; }
nav { width: 320px; flex: none; background: var(--side); border-right: 1px solid var(--line);
  padding: 12px 8px; position: sticky; top: 0; height: 100vh; overflow-y: auto;
  overflow-x: hidden; }
nav h2 { font-size: 13px; text-transform: uppercase; color: var(--muted); margin: 4px 8px; }
nav ol { list-style: none; margin: 0; padding: 0; }
nav li { padding-left: calc(var(--depth) * 14px); }
nav button { all: unset; display: block; width: 100%; cursor: pointer; padding: 2px 6px;
  border-radius: 4px; font-size: 13px; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; color: var(--muted); }
nav li.on-path button { color: var(--fg); }
nav li.current button { background: #dbe6f6; font-weight: 600; }
nav li.end button::after { content: " ●"; color: var(--accent); }
nav button:hover, nav button:focus { background: #e6e9ee; }
main { flex: 1; min-width: 0; max-width: 900px; margin: 0 auto; padding: 16px 24px 64px; }
main > h1 { font-size: 22px; margin: 8px 0 0; }
main > .meta { color: var(--muted); margin: 0 0 16px; font-size: 13px; }
.entry { background: var(--bot); border: 1px solid var(--line); border-radius: 8px;
  padding: 8px 14px; margin: 10px 0; }
.entry.user { background: var(--user); }
.entry.custom, .entry.compaction, .entry.branch-summary { background: var(--note); }
.entry.model-change, .entry.system { background: transparent; border-style: dashed; }
.entry header { display: flex; gap: 10px; align-items: baseline; font-size: 12px;
  color: var(--muted); }
.entry header .who { font-weight: 600; color: var(--fg); }
.entry header time { margin-left: auto; }
.label { background: #fce94f; color: #333; border-radius: 3px; padding: 0 5px; }
.alts button { all: unset; cursor: pointer; padding: 0 4px; color: var(--accent); }
.alts button:disabled { color: var(--line); cursor: default; }
.plain { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: 6px 0; border-left: 3px solid var(--line); padding-left: 8px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details.tool-result.error { border-left-color: #cc0000; }
pre { background: #f6f8fa; padding: 8px; border-radius: 6px; overflow: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.md pre { white-space: pre; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
.md { overflow-wrap: anywhere; }
.md table { border-collapse: collapse; display: block; overflow-x: auto; } .md td, .md th { border: 1px solid var(--line); padding: 2px 6px; }
img { max-width: 100%; height: auto; image-rendering: auto; border: 1px solid var(--line); }
figure.file { margin: 6px 0; } figure.file audio { display: block; max-width: 100%; }
figure.file figcaption, p.file { font-size: 13px; color: var(--muted); }
.note { color: var(--muted); font-style: italic; margin: 4px 0; }
.error { color: #cc0000; }
@media (max-width: 800px) { body { display: block; } nav { width: auto; height: auto;
  position: static; max-height: 40vh; } }
"""

# The script only moves the page's own elements and reads their data-* ids:
# no session text passes through it.
_SCRIPT = """
(function () {
  var store = document.getElementById("store"), chat = document.getElementById("chat");
  var entries = {}, kids = {};
  document.querySelectorAll("article.entry").forEach(function (el) {
    entries[el.dataset.id] = el;
  });
  document.querySelectorAll("article.entry").forEach(function (el) {
    var parent = entries[el.dataset.parent] ? el.dataset.parent : "";
    (kids[parent] = kids[parent] || []).push(el.dataset.id);
  });
  Object.keys(kids).forEach(function (p) {
    kids[p].sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
  });
  function latest(id) {
    while (kids[id] && kids[id].length) id = kids[id][kids[id].length - 1];
    return id;
  }
  function show(leaf) {
    var path = [];
    for (var id = leaf; id && entries[id]; id = entries[id].dataset.parent) path.unshift(id);
    Array.prototype.slice.call(chat.children).forEach(function (el) { store.appendChild(el); });
    path.forEach(function (id) { chat.appendChild(entries[id]); alternatives(id); });
    var onPath = {};
    path.forEach(function (id) { onPath[id] = true; });
    document.querySelectorAll("nav li").forEach(function (li) {
      var id = li.firstChild.dataset.go;
      li.classList.toggle("on-path", !!onPath[id]);
      li.classList.toggle("current", id === leaf);
    });
    document.body.dataset.leaf = leaf;
  }
  function alternatives(id) {
    var el = entries[id], box = el.querySelector(".alts");
    var siblings = kids[entries[el.dataset.parent] ? el.dataset.parent : ""] || [];
    box.textContent = "";
    if (siblings.length < 2) return;
    var at = siblings.indexOf(id);
    function button(text, target, name) {
      var b = document.createElement("button");
      b.type = "button"; b.textContent = text; b.title = name;
      b.className = name.split(" ")[0];
      if (target === undefined) b.disabled = true;
      else b.addEventListener("click", function () { show(latest(target)); });
      box.appendChild(b);
    }
    button("\\u2039", siblings[at - 1], "previous alternative");
    box.appendChild(document.createTextNode((at + 1) + "/" + siblings.length));
    button("\\u203a", siblings[at + 1], "next alternative");
  }
  document.querySelectorAll("nav button").forEach(function (b) {
    b.addEventListener("click", function () {
      show(latest(b.dataset.go));
      var el = entries[b.dataset.go];
      if (el && el.scrollIntoView) el.scrollIntoView({block: "nearest"});
    });
  });
  if (document.body.dataset.leaf) show(document.body.dataset.leaf);
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; media-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="generator" content="Tangents">
<title>{title}</title>
<style>{css}</style>
</head>
<body data-leaf="{leaf}">
<nav aria-label="Session tree"><h2>Tree</h2><ol id="tree">{tree}</ol></nav>
<main>
<h1>{heading}</h1>
<p class="meta">{meta}</p>
<div id="chat">{chat}</div>
<div id="store" hidden>{stored}</div>
</main>
<script>{script}</script>
</body>
</html>
"""
