"""Fixtures of the database unit tests."""

from oslo_config import cfg
import pytest

from climate import context
from climate.db import api as db_api
from climate.tests import schema


@pytest.fixture
def ctx(tmp_path):
    """An admin context on a new SQLite database at the head revision."""
    from climate import conf  # noqa: F401 - registers options
    cfg.CONF([], project='climate', default_config_files=[])
    schema.head_database(tmp_path / 'c.sqlite')
    yield context.admin_context()
    db_api.get_engine().dispose()
