"""climate-db-manage: schema migrations.

    climate-db-manage [--config-file F] upgrade [REVISION]
    climate-db-manage downgrade REVISION
    climate-db-manage current
    climate-db-manage revision -m MESSAGE [--autogenerate]
"""

import sys

from oslo_config import cfg

from climate.db import migration
from climate import service

CONF = cfg.CONF


def _upgrade():
    migration.upgrade(CONF.command.revision)
    print('Database at %s' % migration.current())


def _downgrade():
    migration.downgrade(CONF.command.revision)
    print('Database at %s' % migration.current())


def _current():
    print(migration.current() or 'empty (no Climate schema)')


def _revision():
    migration.revision(CONF.command.message, CONF.command.autogenerate)


def _add_commands(subparsers):
    parser = subparsers.add_parser('upgrade', help='Upgrade the schema.')
    parser.add_argument('revision', nargs='?', default='head')
    parser.set_defaults(func=_upgrade)
    parser = subparsers.add_parser('downgrade', help='Downgrade the schema.')
    parser.add_argument('revision')
    parser.set_defaults(func=_downgrade)
    parser = subparsers.add_parser('current', help='Show the revision.')
    parser.set_defaults(func=_current)
    parser = subparsers.add_parser('revision', help='Write a migration.')
    parser.add_argument('-m', '--message', required=True)
    parser.add_argument('--autogenerate', action='store_true')
    parser.set_defaults(func=_revision)


command_opt = cfg.SubCommandOpt('command', title='Commands',
                                handler=_add_commands)


def main():
    CONF.register_cli_opt(command_opt)
    service.prepare()
    try:
        CONF.command.func()
    except Exception as exc:
        sys.exit('climate-db-manage: %s' % exc)
