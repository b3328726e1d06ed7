"""Alembic migrations against the real databases: the migrated schema is
exactly what the models declare, and every migration goes down and up."""

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

from climate.db import api as db_api
from climate.db import migration
from climate.db import models


def _diff(engine):
    with engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True})
        return autogenerate.compare_metadata(context, models.Base.metadata)


def test_migrations_match_models_and_round_trip(database):
    db_api.configure(connection=database.url)
    try:
        migration.upgrade()
        assert migration.current() == migration.head()
        assert _diff(database.engine) == []

        migration.downgrade('base')
        left = set(sa.inspect(database.engine).get_table_names())
        assert left <= {'alembic_version'}

        migration.upgrade()
        assert _diff(database.engine) == []
    finally:
        db_api.get_engine().dispose()
