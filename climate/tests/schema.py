"""A test's SQLite database at the head revision, copied from one that
was migrated once in this test process.

Running every migration took 0.3-1 s of each test that needed a database
(more than most such tests take otherwise); copying the migrated file
takes milliseconds.  The migrations themselves keep their own tests,
which run them (``climate/tests/unit/db/test_migrations.py`` and the
round trips of ``ledger_checks``).
"""

import atexit
import os
import shutil
import sqlite3
import tempfile

from climate.db import api as db_api
from climate.db import migration

_template = None


def _head_template():
    """The path of this process's database at the head revision, migrated
    on first use (each pytest-xdist worker is a process of its own)."""
    global _template
    if _template is None:
        folder = tempfile.mkdtemp(prefix='climate-schema-')
        atexit.register(shutil.rmtree, folder, True)
        path = os.path.join(folder, 'head.sqlite')
        db_api.configure(connection='sqlite:///%s' % path)
        try:
            migration.upgrade()
        finally:
            db_api.get_engine().dispose()
        _template = path
    return _template


def head_database(path):
    """Write a SQLite database at the head revision to ``path`` (a new
    file) and make it the one ``climate.db.api`` uses; returns its URL.

    (The SQLite backup API copies a consistent image whatever the
    template's journal mode.)
    """
    source = sqlite3.connect(_head_template())
    try:
        target = sqlite3.connect(str(path))
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()
    url = 'sqlite:///%s' % path
    db_api.configure(connection=url)
    return url
