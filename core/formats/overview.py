"""An overview of one session: what ``tangents sessions show`` prints and
``/info`` shows.

Counts are over the whole tree (every branch), since that is what the
session holds and what was paid for; the current branch's length is given
beside them. Tokens and cost are summed per model from the assistant
messages' usage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.sessions.content import ToolCallContent, ToolResultContent
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.ids import short_id
from core.sessions.messages import Usage
from core.sessions.persistence import SessionInfo, SessionStore

SNIPPET = 60


@dataclass(frozen=True)
class ModelUsage:
    model: str
    replies: int
    usage: Usage

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "replies": self.replies, **self.usage.to_dict()}


@dataclass(frozen=True)
class Overview:
    info: SessionInfo
    entries: int
    messages: Mapping[str, int]
    """Messages by role."""
    path_length: int
    leaves: Sequence[tuple[str, str]]
    """(entry id, the last words there) of every branch's end, oldest first."""
    compactions: Sequence[tuple[str, int]]
    """(entry id, tokens before) of each compaction."""
    branch_summaries: int
    model_changes: int
    labels: Mapping[str, str]
    models: Sequence[ModelUsage]
    tool_calls: Mapping[str, int]
    tool_errors: int
    images: int
    position: str = ""
    """The last words at the current position."""
    total: Usage = field(default_factory=Usage)
    endpoints: Sequence[str] = ()
    """The base URLs saved with the session's model changes, first seen first."""
    untrusted: frozenset[str] = frozenset()
    """Those of :attr:`endpoints` the user never named here (the caller knows:
    :func:`core.chat.target.is_trusted`): nothing is sent to them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.info.id,
            "title": self.info.title,
            "created_at": self.info.created_at,
            "updated_at": self.info.updated_at,
            "cwd": self.info.cwd,
            "archived": self.info.archived,
            "leaf_id": self.info.leaf_id,
            "position": self.position,
            "entries": self.entries,
            "messages": sum(self.messages.values()),
            "messages_by_role": dict(self.messages),
            "current_branch_entries": self.path_length,
            "branches": len(self.leaves),
            "leaves": [{"id": i, "text": t} for i, t in self.leaves],
            "compactions": [{"id": i, "tokens_before": t} for i, t in self.compactions],
            "branch_summaries": self.branch_summaries,
            "model_changes": self.model_changes,
            "labels": dict(self.labels),
            "usage_by_model": [m.to_dict() for m in self.models],
            "usage_total": self.total.to_dict(),
            "tool_calls": dict(self.tool_calls),
            "tool_errors": self.tool_errors,
            "images": self.images,
            "endpoints": [
                {"url": url, "trusted": url not in self.untrusted} for url in self.endpoints
            ],
        }


async def load_overview(store: SessionStore, info: SessionInfo) -> Overview:
    """The overview of a stored session."""
    return session_overview(info, await store.entries(info.id), await store.labels(info.id))


def session_overview(
    info: SessionInfo, entries: Sequence[Entry], labels: Mapping[str, str]
) -> Overview:
    roles: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    usage: dict[str, Usage] = {}
    replies: Counter[str] = Counter()
    compactions = []
    summaries = changes = errors = 0
    images: set[str] = set()
    endpoints: dict[str, None] = {}
    parents = {entry.parent_id for entry in entries}
    by_id = {entry.id: entry for entry in entries}
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, Compaction):
            compactions.append((entry.id, payload.tokens_before))
        elif isinstance(payload, BranchSummary):
            summaries += 1
        elif isinstance(payload, ModelChange):
            changes += 1
            if payload.api_base:
                endpoints[payload.api_base] = None
        elif isinstance(payload, Note):
            continue
        else:
            roles[payload.role] += 1
            images.update(image.sha256 for image in payload.images)
            for block in payload.content:
                if isinstance(block, ToolCallContent):
                    tools[block.name] += 1
                elif isinstance(block, ToolResultContent) and block.is_error:
                    errors += 1
            if payload.role == "assistant":
                model = payload.model or "(unknown model)"
                replies[model] += 1
                if payload.usage is not None:
                    usage[model] = usage.get(model, Usage()) + payload.usage
    leaves = [(e.id, _last_words(e, by_id)) for e in entries if e.id not in parents]
    depth, node = 0, by_id.get(info.leaf_id) if info.leaf_id else None
    while node is not None:
        depth += 1
        node = by_id.get(node.parent_id) if node.parent_id else None
    models = [ModelUsage(m, replies[m], usage.get(m, Usage())) for m in sorted(replies)]
    total = sum((m.usage for m in models), Usage())
    return Overview(
        info=info,
        entries=len(entries),
        messages=dict(roles),
        path_length=depth,
        leaves=leaves,
        compactions=compactions,
        branch_summaries=summaries,
        model_changes=changes,
        labels=dict(labels),
        models=models,
        tool_calls=dict(tools.most_common()),
        tool_errors=errors,
        images=len(images),
        position=_last_words(by_id[info.leaf_id], by_id) if info.leaf_id in by_id else "",
        total=total,
        endpoints=tuple(endpoints),
    )


def _last_words(entry: Entry, by_id: Mapping[str, Entry]) -> str:
    """The text of the nearest message at or above ``entry``, shortened to one line."""
    node: Entry | None = entry
    while node is not None:
        message = node.message
        if message is not None and message.text.strip():
            text = " ".join(message.text.split())
            return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
        node = by_id.get(node.parent_id) if node.parent_id else None
    return ""


def overview_text(overview: Overview) -> str:
    """The overview as plain text lines (the caller sanitises for a terminal)."""
    info = overview.info
    messages = sum(overview.messages.values())
    roles = ", ".join(f"{n} {role}" for role, n in sorted(overview.messages.items()))
    lines = [
        f"{info.title or '(untitled)'}",
        f"  id       {short_id(info.id)}  ({info.id})",
        f"  created  {_when(info.created_at)}    updated  {_when(info.updated_at)}",
    ]
    if info.cwd:
        lines.append(f"  folder   {info.cwd}")
    lines += [
        f"  entries  {overview.entries} ({messages} messages: {roles or 'none'})",
        f"  branches {len(overview.leaves)}; the current one is {overview.path_length} entries long",
    ]
    if info.leaf_id:
        lines.append(f"  at       {short_id(info.leaf_id)}  {overview.position}")
    for leaf_id, text in overview.leaves:
        mark = "*" if leaf_id == info.leaf_id else " "
        lines.append(f"   {mark} {short_id(leaf_id)}  {text}")
    if overview.compactions:
        lines.append(f"  compactions {len(overview.compactions)}")
        for entry_id, tokens in overview.compactions:
            lines.append(f"     {short_id(entry_id)}  {tokens:,} tokens before")
    if overview.branch_summaries or overview.model_changes:
        lines.append(
            f"  branch summaries {overview.branch_summaries}; model changes {overview.model_changes}"
        )
    for url in overview.endpoints:
        lines.append(f"  endpoint {url}")
        if url in overview.untrusted:
            lines[-1] += (
                " (not trusted: it came with the session; name it with --api-base to use it)"
            )
    if overview.labels:
        lines.append(f"  labels   {len(overview.labels)}")
        for entry_id, label in overview.labels.items():
            lines.append(f"     {short_id(entry_id)}  {label}")
    if overview.models:
        lines.append("  tokens and cost by model")
        rows = list(overview.models)
        if len(rows) > 1:
            rows.append(ModelUsage("total", sum(m.replies for m in rows), overview.total))
        for row in rows:
            u = row.usage
            replies = f"{row.replies} repl{'y' if row.replies == 1 else 'ies'}"
            lines.append(f"     {row.model}: {replies}, ${u.cost:.4f}")
            # Two short lines: the overview fits an 80-column /info dialog.
            about = "~" if u.estimated else ""  # counted here: the server said no usage
            lines.append(
                f"       input {about}{u.input_tokens:,} · output {about}{u.output_tokens:,}"
                f" · reasoning {u.reasoning_tokens:,}"
            )
            lines.append(
                f"       cache read {u.cache_read_tokens:,} · cache write {u.cache_write_tokens:,}"
            )
    if overview.tool_calls:
        calls = ", ".join(f"{name} {n}" for name, n in overview.tool_calls.items())
        errors = f" ({overview.tool_errors} failed)" if overview.tool_errors else ""
        lines.append(f"  tool calls {sum(overview.tool_calls.values())}{errors}: {calls}")
    if overview.images:
        lines.append(f"  images   {overview.images}")
    return "\n".join(lines) + "\n"


def _when(timestamp: str) -> str:
    return timestamp[:19].replace("T", " ")
