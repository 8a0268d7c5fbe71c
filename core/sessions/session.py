"""The session: one object every front end (TUI, print mode) works through.

It holds the current path in memory and writes through a :class:`SessionStore`.
The path is the chain from the root to ``leaf_id``; moving the leaf is how the
user branches, switches siblings and jumps through the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from core.sessions.content import TextContent
from core.sessions.context import Context, build_context, current_model, system_prompt
from core.sessions.entries import DEFAULT_NOTE_DEPTH, Compaction, Entry, ModelChange, Note, Payload
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import Message
from core.sessions.persistence import SESSION_STATES, SessionInfo, SessionStore

TITLE_LIMIT = 60

AppendListener = Callable[[Sequence[Entry]], None]


class SessionError(Exception):
    """A session operation that cannot be done (unknown id, foreign entry, ...)."""


class SessionInactive(SessionError):
    """A session that is not active takes no new entries."""


def inactive_reason(info: SessionInfo) -> str:
    """One line: why the session takes no new messages, and the ways on."""
    return (
        f"session {info.id} is {info.status} and takes no new messages; reactivate it with "
        f"'tangents sessions status {info.id} active' (/status active in the app) or fork it"
    )


async def _leaf_path(store: SessionStore, info: SessionInfo) -> list[Entry]:
    """The path to the session's leaf; a leaf that is not in the database (a
    file edited by hand) is a :class:`SessionError`, not an empty session."""
    if not info.leaf_id:
        return []
    path = await store.path(info.leaf_id)
    if not path:
        raise SessionError(
            f"session {info.id}'s current entry {info.leaf_id} is missing from the database"
        )
    return path


def derive_title(text: str) -> str | None:
    """The first non-empty line of a user's first message, shortened."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1].rstrip() + "…"
    return None


class Session:
    def __init__(
        self, store: SessionStore, info: SessionInfo, path: list[Entry], *, persisted: bool = True
    ) -> None:
        self.store = store
        self.info = info
        self._path = path
        self._persisted = persisted
        self._listeners: list[AppendListener] = []

    # --- opening --------------------------------------------------------

    @classmethod
    async def create(
        cls,
        store: SessionStore,
        *,
        cwd: str | None = None,
        parent_session_id: str | None = None,
        parent_entry_id: str | None = None,
    ) -> Session:
        """A new session. Its row is written with the first entry, so a session
        opened and left empty leaves nothing behind."""
        now = now_iso()
        info = SessionInfo(
            id=uuid7(),
            title=None,
            created_at=now,
            updated_at=now,
            cwd=cwd,
            parent_session_id=parent_session_id,
            parent_entry_id=parent_entry_id,
        )
        return cls(store, info, [], persisted=False)

    @classmethod
    async def open(cls, store: SessionStore, session_id: str) -> Session:
        info = await store.get_session(session_id)
        if info is None:
            raise SessionError(f"no session with id {session_id!r}")
        return await cls._opened(store, info)

    @classmethod
    async def latest(cls, store: SessionStore) -> Session | None:
        info = await store.latest_session()
        if info is None:
            return None
        return await cls._opened(store, info)

    @classmethod
    async def _opened(cls, store: SessionStore, info: SessionInfo) -> Session:
        """The session with its path, after recovering the replies a killed
        process left half-streamed (core/chat/checkpoint.py)."""
        if await store.recover_partials(info.id):
            info = await store.get_session(info.id) or info
        return cls(store, info, await _leaf_path(store, info))

    # --- reading ---------------------------------------------------------

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def leaf_id(self) -> str | None:
        return self.info.leaf_id

    @property
    def path(self) -> list[Entry]:
        """Root first, ending at the leaf. Do not mutate."""
        return self._path

    @property
    def title(self) -> str | None:
        return self.info.title

    def messages(self) -> list[Message]:
        return [e.payload for e in self._path if isinstance(e.payload, Message)]

    def model(self, default_model: str, default_thinking: str = "off") -> tuple[str, str]:
        return current_model(self._path, default_model, default_thinking)

    def context(self, default_model: str, **options) -> Context:
        return build_context(self._path, default_model, **options)

    async def entry(self, entry_id: str) -> Entry:
        """An entry of this session; :class:`SessionError` if it belongs elsewhere."""
        for entry in self._path:
            if entry.id == entry_id:
                return entry
        found = await self.store.get_entry(entry_id)
        if found is None or found.session_id != self.id:
            raise SessionError(f"entry {entry_id!r} is not part of session {self.id}")
        return found

    async def children(self, entry_id: str | None) -> list[Entry]:
        return await self.store.children(entry_id, self.id)

    async def siblings(self, entry_id: str) -> list[Entry]:
        """The entry and its alternatives (same parent), oldest first."""
        entry = await self.entry(entry_id)
        return await self.store.children(entry.parent_id, self.id)

    # --- writing ---------------------------------------------------------

    async def append(self, payload: Payload, *, entry_id: str | None = None) -> Entry:
        return (await self.append_many([payload], first_id=entry_id))[0]

    async def append_many(
        self, payloads: Sequence[Payload], *, first_id: str | None = None
    ) -> list[Entry]:
        """Append a chain under the leaf in one transaction and move the leaf to its end.

        ``first_id``: the first entry's id, when it was chosen before (a
        checkpointed reply's, core/chat/checkpoint.py)."""
        return await self._append_chain(_chain(self.id, self.leaf_id, payloads, first_id))

    async def _append_chain(self, entries: list[Entry]) -> list[Entry]:
        """Save ``entries`` (a chain under the leaf) and move the leaf to its end;
        :class:`SessionInactive` (nothing written) when the session is not active."""
        if not self.info.active:
            raise SessionInactive(inactive_reason(self.info))
        parent = entries[-1].id if entries else self.leaf_id
        title = self._derived_title(entries)
        info = replace(
            self.info,
            leaf_id=parent,
            updated_at=entries[-1].created_at if entries else self.info.updated_at,
            title=title if title is not None else self.info.title,
        )
        if self._persisted:
            await self.store.append(self.id, entries, parent, title)
        else:
            await self.store.create_session(info, entries)
            self._persisted = True
        self._path = self._path + entries
        self.info = info
        for listener in self._listeners:
            listener(entries)
        return entries

    def on_append(self, listener: AppendListener) -> None:
        """Call ``listener(entries)`` after every append, whoever appends (a turn,
        a compaction, a front end). Listeners must be quick and must not raise."""
        self._listeners.append(listener)

    @property
    def persisted(self) -> bool:
        return self._persisted

    async def _ensure_persisted(self) -> None:
        if not self._persisted:
            await self.store.create_session(self.info)
            self._persisted = True

    def _derived_title(self, entries: Sequence[Entry]) -> str | None:
        if self.info.title_set_by_user or self.info.title:
            return None
        for entry in entries:
            message = entry.message
            if message is not None and message.role == "user":
                return derive_title(message.text)
        return None

    def model_change_for(
        self, model: str, thinking: str, api_base: str | None = None
    ) -> ModelChange | None:
        """The entry to append so the path uses ``model``/``thinking`` (at the base
        URL ``api_base``, as already made savable); None if it already does."""
        wanted = ModelChange(model=model, thinking=thinking, api_base=api_base)
        for entry in reversed(self._path):
            if isinstance(entry.payload, ModelChange):
                return None if entry.payload == wanted else wanted
        return wanted

    def system_change_for(self, system: str | None) -> Message | None:
        """The system message to append so the path uses ``system``; None if it already does."""
        if not system or system_prompt(self._path) == system:
            return None
        return Message(role="system", content=(TextContent(system),))

    async def set_model(
        self, model: str, thinking: str = "off", api_base: str | None = None
    ) -> Entry | None:
        change = self.model_change_for(model, thinking, api_base)
        return await self.append(change) if change is not None else None

    async def move_leaf(self, entry_id: str | None, *, path: list[Entry] | None = None) -> None:
        """Make ``entry_id`` the current position (``None``: before the first entry).

        ``path`` (root first, ending at ``entry_id``) spares reading it again
        when the caller already has it, e.g. from a :class:`~core.branching.tree.SessionTree`.
        """
        if entry_id is None:
            path = []
        else:
            await self.entry(entry_id)
            if path is None or not path or path[-1].id != entry_id:
                path = await self.store.path(entry_id)
        await self._ensure_persisted()
        await self.store.set_leaf(self.id, entry_id)
        self._path = path
        self.info = replace(self.info, leaf_id=entry_id)

    async def set_title(self, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise SessionError("a title cannot be empty")
        await self._ensure_persisted()
        await self.store.set_title(self.id, title, by_user=True)
        self.info = replace(self.info, title=title, title_set_by_user=True)

    async def set_status(self, status: str) -> None:
        """Move the session through its lifecycle (:data:`SESSION_STATES`)."""
        if status not in SESSION_STATES:
            raise SessionError(f"unknown status {status!r}: one of {', '.join(SESSION_STATES)}")
        await self._ensure_persisted()
        await self.store.set_status(self.id, status)
        self.info = replace(self.info, status=status)

    async def pin_note(self, text: str | None, depth: int = DEFAULT_NOTE_DEPTH) -> Entry:
        """Save a note entry on the current branch: ``text`` pinned ``depth``
        messages from the end of every later request (core/sessions/note.py);
        ``None`` turns the note off."""
        if text is not None and not text.strip():
            raise SessionError("a note cannot be empty (turn it off instead)")
        try:
            note = Note(text=text.strip() if text else "", depth=depth)
        except ValueError as error:
            raise SessionError(str(error)) from None
        return await self.append(note)

    async def set_label(self, entry_id: str, label: str | None) -> None:
        await self.entry(entry_id)
        await self.store.set_label(self.id, entry_id, label or None)

    async def labels(self) -> dict[str, str]:
        return await self.store.labels(self.id)

    async def fork(
        self, entry_id: str, first_k: int | None = None, last_n: int | None = None
    ) -> Session:
        """A new session holding the path up to ``entry_id`` (optionally only its
        first ``first_k`` and last ``last_n`` messages), remembering its parent."""
        await self.entry(entry_id)
        source = await self.store.path(entry_id)
        if first_k is not None or last_n is not None:
            source = _trim(source, first_k or 0, last_n or 0)
        forked = await Session.create(
            self.store, cwd=self.info.cwd, parent_session_id=self.id, parent_entry_id=entry_id
        )
        if source:
            await forked._append_chain(_copies(forked.id, source))
        if self.info.title:
            await forked.store.set_title(forked.id, f"{self.info.title} (fork)", by_user=False)
            forked.info = replace(forked.info, title=f"{self.info.title} (fork)")
        return forked


def _chain(
    session_id: str, parent: str | None, payloads: Sequence[Payload], first_id: str | None = None
) -> list[Entry]:
    """New entries for ``payloads``, each the child of the one before; the first
    has the id ``first_id`` when given."""
    entries: list[Entry] = []
    for payload in payloads:
        entry = Entry.new(session_id, parent, payload)
        if first_id is not None and not entries:
            entry = replace(entry, id=first_id)
        entries.append(entry)
        parent = entry.id
    return entries


def _copies(session_id: str, path: Sequence[Entry]) -> list[Entry]:
    """``path`` as a new chain in another session; a compaction keeps from the
    copy of its first kept entry (from nothing before it when that was left out)."""
    new_ids: dict[str, str] = {}
    copies: list[Entry] = []
    for entry in path:
        payload = entry.payload
        if isinstance(payload, Compaction) and payload.first_kept_id is not None:
            payload = replace(payload, first_kept_id=new_ids.get(payload.first_kept_id))
        copies.append(Entry.new(session_id, copies[-1].id if copies else None, payload))
        new_ids[entry.id] = copies[-1].id
    return copies


def _trim(path: list[Entry], first_k: int, last_n: int) -> list[Entry]:
    """Keep the first k and last n message entries, plus every non-message entry
    (model changes, summaries) among the kept range's context; never split a tool
    call from its result."""
    message_positions = [i for i, e in enumerate(path) if e.message is not None]
    if first_k + last_n >= len(message_positions):
        return path
    keep = set(message_positions[:first_k]) | set(
        message_positions[len(message_positions) - last_n :] if last_n else []
    )
    # Extend the kept tail backwards so it starts at a user message.
    if last_n:
        start = message_positions[len(message_positions) - last_n]
        while start > 0 and _role(path[start]) != "user":
            start -= 1
            keep.add(start)
    # Extend the head forwards so it ends after any tool results of its last call.
    if first_k:
        end = message_positions[first_k - 1]
        while end + 1 < len(path) and _role(path[end + 1]) == "tool_result":
            end += 1
            keep.add(end)
    return [
        e
        for i, e in enumerate(path)
        if i in keep or e.message is None or e.message.role == "system"
    ]


def _role(entry: Entry) -> str | None:
    return entry.message.role if entry.message is not None else None
