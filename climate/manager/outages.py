"""A lost database, as the RPC endpoints answer it.

Every endpoint method runs behind :func:`guard`: an error that says the
database cannot be reached (refused or lost connection, a connection
invalidated in the middle of a transaction, a pool with no connection to
give) becomes ``DatabaseUnavailable``, a 503 the API answers with a
Retry-After header, instead of a 500 and a traceback.  The transaction it
interrupted has rolled back (the database drops an unfinished transaction
with its connection), so nothing is half-written.
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


def _guarded(name, method):
    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except messaging.ExpectedException:
            raise
        except Exception as exc:
            if not is_database_outage(exc):
                raise
            LOG.warning('%s: database unavailable (%s: %s)', name,
                        type(exc).__name__, str(exc).splitlines()[0]
                        if str(exc) else '')
            try:
                raise exceptions.DatabaseUnavailable() from exc
            except exceptions.DatabaseUnavailable:
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
