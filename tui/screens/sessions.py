"""The session picker: every session newest first, search as you type over
titles and message text, and resume, rename, archive or delete.

Queries run in aiosqlite's thread through a worker, a short pause after the
last key (:data:`DEBOUNCE`); each query has a number and only the newest
one's results are shown, so a slow old query never overwrites a newer one.
Enter while a query is still running waits for it and then resumes the top
row the user is about to see.

Dismisses with a :class:`PickerResult`: the session to open, if any, and
whether the session the chat shows was deleted meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Static

from core.sessions.persistence import SessionMatch
from core.sessions.session import Session, SessionError
from tui import keymap
from tui.screens.dialogs import Confirm, TextPrompt
from tui.widgets.session_list import SessionList, utc_now
from tui.widgets.session_rows import one_line

DEBOUNCE = 0.12
"""Seconds after the last key before a search runs."""
LIST_LIMIT = 2_000
"""Sessions listed without a query; older ones are found by searching."""
SEARCH_LIMIT = 200


@dataclass(frozen=True)
class PickerResult:
    session_id: str | None
    """The session to open (None: stay)."""
    current_deleted: bool = False


class SessionPicker(ModalScreen[PickerResult]):
    CSS_PATH = "sessions.tcss"
    BINDINGS = keymap.bindings("dialog") + keymap.bindings("sessions")

    def __init__(
        self, current: Session, *, query: str = "", now: Callable[[], datetime] = utc_now
    ) -> None:
        super().__init__()
        self.current = current
        self.initial_query = query
        self.store = current.store
        self.now = now
        self.show_archived = False
        self.current_deleted = False
        self._query_number = 0
        self._shown_number = -1
        self._timer: Timer | None = None
        self._resume_when_shown = False

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-body") as body:
            body.border_title = "Sessions"
            yield Input(
                self.initial_query,
                placeholder="type to search titles and messages",
                id="sessions-search",
            )
            yield SessionList(current_id=self.current.id, now=self.now, id="sessions-list")
            yield Static("loading…", id="sessions-status")
            # Not in the border, where a narrow terminal cuts them: a line that wraps.
            yield Static(self._hints(), id="sessions-hints", markup=False)

    def _hints(self) -> str:
        keys = [
            (keymap.key_in(self, i), word)
            for i, word in (
                ("sessions_resume", "resume"),
                ("sessions_rename", "rename"),
                ("sessions_archive", "archive"),
                ("sessions_delete", "delete"),
                ("sessions_show_archived", "archived"),
                ("close", "close"),
            )
        ]
        return " · ".join(f"{key} {word}" for key, word in keys)

    def on_mount(self) -> None:
        self._refresh_rows()

    @property
    def session_list(self) -> SessionList:
        return self.query_one("#sessions-list", SessionList)

    @property
    def query_text(self) -> str:
        return self.query_one("#sessions-search", Input).value.strip()

    @property
    def settled(self) -> bool:
        """Whether the rows shown answer the latest query."""
        return self._shown_number == self._query_number

    # --- querying -------------------------------------------------------------

    @on(Input.Changed, "#sessions-search")
    def _query_changed(self) -> None:
        self._query_number += 1
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self._refresh_rows) if self.query_text else None
        if self._timer is None:
            self._refresh_rows()

    def _refresh_rows(self, select: str | None = None) -> None:
        """Run the current query (or list) now; ``select`` keeps that session highlighted."""
        self._timer = None
        highlighted = self.session_list.highlighted
        keep = select or (highlighted.summary.info.id if highlighted else None)
        self._load(self._query_number, self.query_text, self.show_archived, keep)

    @work(exclusive=True, group="sessions-query", exit_on_error=False)
    async def _load(self, number: int, query: str, archived: bool, select: str | None) -> None:
        if query:
            rows = await self.store.search_sessions(
                query, limit=SEARCH_LIMIT, include_archived=archived
            )
        else:
            rows = [
                SessionMatch(summary, None, "", None)
                for summary in await self.store.list_sessions(
                    limit=LIST_LIMIT, include_archived=archived
                )
            ]
        if number != self._query_number:
            return  # a newer query is on its way
        self._shown_number = number
        self.session_list.set_rows(rows, select=select)
        self._show_status(rows, query)
        if self._resume_when_shown:
            self._resume_when_shown = False
            self.action_resume()

    def _show_status(self, rows: list[SessionMatch], query: str) -> None:
        if query:
            status = (
                f"{len(rows)} session{'s' if len(rows) != 1 else ''} matching “{one_line(query)}”"
            )
        elif not rows:
            status = "No sessions yet" + ("" if self.show_archived else " (archived ones hidden)")
        else:
            status = f"{len(rows)} session{'s' if len(rows) != 1 else ''}, newest first"
            if len(rows) == LIST_LIMIT:
                status += f" (the newest {LIST_LIMIT}; search to find older ones)"
        status += " · archived shown" if self.show_archived else ""
        self.query_one("#sessions-status", Static).update(Content(status))

    # --- actions ----------------------------------------------------------------

    @on(Input.Submitted, "#sessions-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_resume()

    @on(SessionList.Chosen)
    def _chosen(self, event: SessionList.Chosen) -> None:
        self.dismiss(PickerResult(event.match.summary.info.id, self.current_deleted))

    def action_resume(self) -> None:
        if not self.settled:
            self._resume_when_shown = True
            return
        row = self.session_list.highlighted
        if row is not None:
            self.dismiss(PickerResult(row.summary.info.id, self.current_deleted))

    def action_close(self) -> None:
        self.dismiss(PickerResult(None, self.current_deleted))

    def action_cursor(self, delta: int) -> None:
        self.session_list.move(delta)

    def action_page(self, direction: int) -> None:
        self.session_list.move(direction * max(1, self.session_list.size.height // 2 - 1))

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self._query_number += 1
        self._refresh_rows()

    def action_rename(self) -> None:
        row = self.session_list.highlighted
        if row is None:
            return
        info = row.summary.info

        def rename(title: str | None) -> None:
            if title is not None:
                self._rename(info.id, title)

        name = one_line(info.title or row.summary.first_message or "(untitled)")
        self.app.push_screen(TextPrompt(f"Rename “{name}”", info.title or ""), rename)

    @work(group="sessions-change", exit_on_error=False)
    async def _rename(self, session_id: str, title: str) -> None:
        try:
            if session_id == self.current.id:
                await self.current.set_title(title)
            else:
                if not title.strip():
                    raise SessionError("a title cannot be empty")
                await self.store.set_title(session_id, " ".join(title.split()), by_user=True)
        except SessionError as error:
            self.notify(str(error), severity="warning")
            return
        self._changed(session_id)

    def action_archive(self) -> None:
        row = self.session_list.highlighted
        if row is not None:
            self._archive(row)

    @work(group="sessions-change", exit_on_error=False)
    async def _archive(self, row: SessionMatch) -> None:
        archived = not row.summary.info.archived
        await self.store.set_archived(row.summary.info.id, archived)
        title = one_line(row.summary.info.title or row.summary.first_message or "(untitled)")
        self.notify(f"{'Archived' if archived else 'Unarchived'}: {title}")
        self._changed(row.summary.info.id)

    def action_delete(self) -> None:
        row = self.session_list.highlighted
        if row is None:
            return
        summary = row.summary
        title = one_line(summary.info.title or summary.first_message or "(untitled)")
        messages, branches = summary.message_count, summary.branch_count
        sizes = (
            f"{messages} message{'s' * (messages != 1)}, {branches} branch{'es' * (branches != 1)}"
        )
        question = f"Delete “{title}” ({sizes}) for good?"
        if summary.info.id == self.current.id:
            question += "\nIt is the session you are in: you will continue in a new, empty session."

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(summary.info.id, title)

        self.app.push_screen(Confirm("Delete session", question), answered)

    @work(group="sessions-change", exit_on_error=False)
    async def _delete(self, session_id: str, title: str) -> None:
        await self.store.delete_session(session_id)
        if session_id == self.current.id:
            self.current_deleted = True
        self.notify(f"Deleted: {title}")
        self._query_number += 1
        self._refresh_rows(select=session_id)

    def _changed(self, session_id: str) -> None:
        """Show the rows again after a change, the changed one still highlighted."""
        self._query_number += 1
        self._refresh_rows(select=session_id)
