"""Alembic environment: runs migrations on Climate's configured database."""

from alembic import context
import sqlalchemy as sa

from climate.db import models

config = context.config
target_metadata = models.Base.metadata


def run_migrations_online():
    connection = config.attributes.get('connection')
    if connection is not None:
        _run(connection)
        return
    engine = sa.create_engine(config.get_main_option('sqlalchemy.url'),
                              poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        _run(conn)


def _run(connection):
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
