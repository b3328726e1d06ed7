"""Idempotency-Key of lease creates (as AWS client tokens and Stripe).

A client whose create got no answer (an outage of the message bus, a lost
connection) cannot know whether the lease was made.  Sent again with the
same ``Idempotency-Key`` header, the create returns the lease the first
request made, as it is now, instead of making a second one:

- the key is per project and remembered ``[manager] idempotency_key_ttl``
  seconds (24 h by default); expired keys are purged by :class:`KeyPurger`;
- the key's row is written first in the lease's own transaction, so a
  create whose answer was lost is there with its key or not at all, and two
  concurrent creates with one key make one lease (the second waits on the
  key's row, then finds it taken and answers with the first's lease);
- the same key with a different request body is refused (409,
  ``IdempotencyKeyReused``): the client has a bug, and answering with the
  other lease would hide it.
"""

import datetime
import hashlib
import json
import re

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import idempotency as db_idempotency
from climate import exceptions
from climate.manager.workers import periodic

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

MAX_LENGTH = 255
# visible ASCII: the key travels in an HTTP header and is compared exactly
_VALID = re.compile(r'^[\x21-\x7e]{1,%d}$' % MAX_LENGTH)

KeyTaken = db_idempotency.KeyTaken


def request_hash(body):
    """SHA-256 of the create's body as canonical JSON."""
    text = json.dumps(body, sort_keys=True, separators=(',', ':'),
                      ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode('ascii')).hexdigest()


class Key:
    """One create's Idempotency-Key, checked and bound to its request."""

    def __init__(self, ctx, key, body):
        """:raises InvalidInput: not 1 to 255 visible ASCII characters."""
        if not isinstance(key, str) or not _VALID.match(key):
            raise exceptions.InvalidInput(
                reason='the Idempotency-Key header must be 1 to %d visible '
                       'ASCII characters (a UUID, for example)' % MAX_LENGTH)
        self.project_id = ctx.project_id
        self.key = key
        self.hash = request_hash(body)
        self._expired_row = False

    def find(self, ctx):
        """The id of the lease this key made, or None if it made none (or
        its record expired).

        :raises IdempotencyKeyReused: the key came with another body.
        """
        row = db_idempotency.get(ctx, self.project_id, self.key)
        if row is None:
            return None
        if row['expires_at'] <= dates.utcnow():
            self._expired_row = True
            return None
        if row['request_hash'] != self.hash:
            raise exceptions.IdempotencyKeyReused(key=self.key,
                                                  lease_id=row['lease_id'])
        return row['lease_id']

    def record(self, ctx, lease_id):
        """Write the key in the caller's (the lease's) transaction; call it
        before writing the lease.

        :raises KeyTaken: a concurrent create with this key committed first.
        """
        now = dates.utcnow()
        db_idempotency.insert(ctx, {
            'project_id': self.project_id,
            'idempotency_key': self.key,
            'request_hash': self.hash,
            'lease_id': lease_id,
            'created_at': now,
            'expires_at': now + datetime.timedelta(
                seconds=CONF.manager.idempotency_key_ttl),
        }, replace_expired_before=now if self._expired_row else None)


def create_once(leases, ctx, body, key):
    """``leases.create(ctx, body)``, made at most once per ``key``.

    A key seen before answers with its lease as it is now (without checking
    the body's dates again: its start may have passed since).

    :param leases: the ``climate.manager.leases.LeaseService``.
    :raises LeaseNotFound: the key's lease was deleted since.
    """
    key = Key(ctx, key, body)
    lease_id = key.find(ctx)
    if lease_id is None:
        try:
            return leases.create(ctx, body, idempotency=key)
        except KeyTaken:
            # a concurrent create with this key won; nothing of ours stayed
            lease_id = key.find(ctx)
            if lease_id is None:  # it expired meanwhile: beyond unlikely
                raise exceptions.Conflict(
                    reason='Idempotency-Key %s is in use; try again' %
                    key.key)
    LOG.info('Create with Idempotency-Key %s of project %s: lease %s made '
             'already', key.key, key.project_id, lease_id)
    return leases.get(ctx, lease_id)


class KeyPurger(periodic.PeriodicTask):
    """Deletes expired Idempotency-Keys every
    ``[manager] idempotency_key_purge_interval`` seconds.  Several managers
    may purge at once: each deletes only what is still expired."""

    name = 'climate-idempotency-purger'
    batch = 1000

    def interval(self):
        return CONF.manager.idempotency_key_purge_interval

    def run_once(self):
        """One pass: every expired key, a batch per transaction; returns
        how many were deleted."""
        ctx = climate_context.admin_context()
        now = dates.utcnow()
        total = 0
        while True:
            count = db_idempotency.purge(ctx, now, self.batch)
            total += count
            if count < self.batch:
                break
        if total:
            LOG.info('Purged %d expired Idempotency-Keys', total)
        return total
