"""A lost database, as the RPC endpoints answer it.

Every endpoint method runs behind :func:`guard`: an error that says the
database cannot be reached (refused or lost connection, a connection
invalidated in the middle of a transaction, a pool with no connection to
give, a Galera node out of the cluster) becomes ``DatabaseUnavailable``,
and a transaction that lost to concurrent writers on every retry
(deadlocks, Galera's certification failures) ``DatabaseBusy``: 503s the
API answers with a Retry-After header, instead of a 500 and a traceback.
The transaction it interrupted has rolled back (the database drops an
unfinished transaction with its connection), so nothing is half-written.
"""

import functools

from oslo_db import exception as db_exc
from oslo_log import log as logging
import oslo_messaging as messaging
import sqlalchemy as sa

from climate import exceptions

LOG = logging.getLogger(__name__)

# What SQLAlchemy raises on a connection it cannot make or has lost (when
# oslo.db's filters leave it as it is, or wrap it in a plain DBError).
_CONNECTION_ERRORS = (
    sa.exc.OperationalError,        # refused, reset, server gone away
    sa.exc.InterfaceError,          # a closed connection used again
    sa.exc.DisconnectionError,
    sa.exc.TimeoutError,            # the pool had no connection to give
    sa.exc.PendingRollbackError,    # invalidated mid-transaction
)


def is_database_outage(exc):
    """True if ``exc`` (or what it wraps) says the database is out of
    reach; a deadlock or a constraint is not an outage."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, db_exc.DBConnectionError):
            return True
        if isinstance(exc, (db_exc.DBDeadlock, db_exc.DBDuplicateEntry,
                            db_exc.DBReferenceError,
                            db_exc.DBConstraintError)):
            return False
        if isinstance(exc, sa.exc.DBAPIError) and \
                exc.connection_invalidated:
            return True
        if isinstance(exc, _CONNECTION_ERRORS):
            return True
        exc = getattr(exc, 'inner_exception', None) or exc.__cause__
    return False


def lost_to_writers(exc):
    """True if ``exc`` (or what it wraps) is a deadlock or a Galera
    certification failure that outlived its retries."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, db_exc.DBDeadlock):
            return True
        exc = getattr(exc, 'inner_exception', None) or exc.__cause__
    return False


def _answer(name, exc):
    """The 503 for an outage or a lost race, or None for anything else."""
    if is_database_outage(exc):
        LOG.warning('%s: database unavailable (%s: %s)', name,
                    type(exc).__name__, str(exc).splitlines()[0]
                    if str(exc) else '')
        return exceptions.DatabaseUnavailable()
    if lost_to_writers(exc):
        LOG.warning('%s: lost to concurrent writers after its retries (%s)',
                    name, str(exc).splitlines()[0] if str(exc) else '')
        return exceptions.DatabaseBusy()
    return None


def _guarded(name, method):
    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except messaging.ExpectedException:
            raise
        except Exception as exc:
            answer = _answer(name, exc)
            if answer is None:
                raise
            try:
                raise answer from exc
            except exceptions.ServiceUnavailable:
                # answered, not logged again with a traceback
                raise messaging.ExpectedException()
    return call


class _Guarded:
    """``endpoint`` with each public method behind the translation."""

    def __init__(self, endpoint):
        self._endpoint = endpoint
        self.target = getattr(endpoint, 'target', None)

    def __getattr__(self, name):
        value = getattr(self._endpoint, name)
        if name.startswith('_') or not callable(value):
            return value
        return _guarded(name, value)


def guard(endpoint):
    """An RPC endpoint answering ``DatabaseUnavailable`` for a lost
    database; give oslo.messaging this instead of ``endpoint``."""
    return _Guarded(endpoint)
