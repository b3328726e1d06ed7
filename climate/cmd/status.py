"""climate-status upgrade check (oslo.upgradecheck)."""

import sys

from oslo_config import cfg
from oslo_upgradecheck import common_checks
from oslo_upgradecheck import upgradecheck
import sqlalchemy as sa

from climate import conf as climate_conf  # noqa: F401
from climate.conf import opts
from climate.db import api as db_api
from climate.db import migration
from climate.manager import plugins as plugin_registry

CONF = cfg.CONF


class Checks(upgradecheck.UpgradeCommands):
    """Checks an operator runs before and after upgrading Climate."""

    def _check_schema(self):
        try:
            current = migration.current()
        except sa.exc.SQLAlchemyError as exc:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Cannot reach the database: %s' % exc)
        head = migration.head()
        if current != head:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Database schema is at %s, this code needs %s: run '
                'climate-db-manage upgrade.' % (current, head))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_plugins(self):
        try:
            plugin_registry.Registry(CONF.manager.plugins)
        except Exception as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_engine(self):
        if db_api.dialect_name() == 'sqlite':
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'SQLite is for the embedded single-process default; run '
                'several managers only on MariaDB/MySQL or PostgreSQL.')
        if not db_api.supports_skip_locked():
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'The database cannot SKIP LOCKED (MariaDB >= 10.6, MySQL '
                '>= 8, PostgreSQL needed for several managers).')
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    _upgrade_checks = (
        ('Database schema', _check_schema),
        ('Resource plugins', _check_plugins),
        ('Database engine', _check_engine),
        ('Policy file', (common_checks.check_policy_json,
                         {'conf': CONF})),
    )


def main():
    opts.set_defaults(CONF)

    def configured():
        db_api.configure()

    result = upgradecheck.main(CONF, project='climate',
                               upgrade_command=_LazyChecks(configured))
    sys.exit(result)


class _LazyChecks(Checks):
    """Configure the database once the config files are parsed."""

    def __init__(self, configure):
        self._configure = configure

    def check(self):
        self._configure()
        return super().check()
