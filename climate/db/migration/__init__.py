"""Schema migrations (alembic) for climate-db-manage and the tests."""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration
from alembic import script

from climate.db import api as db_api

SCRIPT_LOCATION = os.path.join(os.path.dirname(__file__), 'alembic')


def _config(connection=None):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', SCRIPT_LOCATION)
    if connection is not None:
        cfg.attributes['connection'] = connection
    return cfg


def _run(func, *args, **kwargs):
    engine = db_api.get_engine()
    with engine.begin() as connection:
        func(_config(connection), *args, **kwargs)


def upgrade(revision='head'):
    """Bring the schema to ``revision``."""
    _run(command.upgrade, revision)


def downgrade(revision):
    """Take the schema back to ``revision`` (``base`` removes it all)."""
    _run(command.downgrade, revision)


def current():
    """The revision the database is at, or None."""
    with db_api.get_engine().connect() as connection:
        return migration.MigrationContext.configure(
            connection).get_current_revision()


def head():
    """The newest revision this code knows."""
    return script.ScriptDirectory.from_config(_config()).get_current_head()


def revision(message, autogenerate=False):
    """Write a new migration script (developers only)."""
    _run(command.revision, message=message, autogenerate=autogenerate)
