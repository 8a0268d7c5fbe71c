"""Sessions on every machine through a shared folder any sync engine copies.

Each device appends only to its own journals (``journal.py``, ``folder.py``);
entries merge as a union by id, registers (title, archive, status, labels, leaf,
deletion) last-writer-wins by a hybrid logical clock (``hlc.py``,
``registers.py``); ``engine.py`` runs one sync over the ``SessionStore``.
"""
