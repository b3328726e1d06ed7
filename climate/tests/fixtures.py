"""A whole Climate in one process, for tests: SQLite, fake RPC, noauth.

:class:`ClimateEnvironment` configures oslo.config for a test, creates a
temporary SQLite database with the real migrations, starts a manager (its
RPC server over the in-process ``fake://`` transport and its event engine)
and builds the API's WSGI application.  ``stop()`` undoes all of it, so the
next environment starts from nothing: the transports in ``climate.rpc`` and
the policy enforcer are process-global.

Used by the gabbi fixture (``climate/tests/gabbi/fixtures.py``) and by the
Python API tests (``climate/tests/unit/api``).
"""

import datetime
import json
import os
import shutil
import socket
import tempfile
import time

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_db import options as db_options
import pytest
import sqlalchemy as sa
from sqlalchemy import orm
import webob

from climate.api import app as api_app
from climate import conf as climate_conf  # noqa: F401 - registers options
from climate import context
from climate import dates
from climate.db import api as db_api
from climate.db import lease_json
from climate.db import models
from climate.manager import rpcapi
from climate.manager import service as manager_service
from climate import policy
from climate import rpc
from climate.tests import schema

CONF = cfg.CONF
#: Seconds a test environment's manager has to answer its first ping.
BUS_WARM_UP = 60

#: (option, group, value) every test environment sets: identity from
#: headers, in-process RPC, an event engine that looks often and retries
#: fast.  ``[database] connection`` is added per environment.
TEST_OVERRIDES = (
    ('auth_strategy', None, 'noauth'),
    ('transport_url', None, 'fake:/'),
    ('max_sleep', 'manager', 0.5),
    ('event_retry_backoff', 'manager', 0.1),
    ('event_retry_max_backoff', 'manager', 1.0),
)


class ClimateEnvironment:
    """API + manager + SQLite in this process."""

    def __init__(self, overrides=()):
        self.extra_overrides = tuple(overrides)
        self.tmpdir = None
        self.db_path = None
        self.connection = None
        self.manager = None
        self.app = None
        self._overridden = []
        self._outdated = set()

    # -- lifecycle -------------------------------------------------------

    def _override(self, name, group, value):
        CONF.set_override(name, value, group=group)
        self._overridden.append((name, group))

    def configure(self):
        rpc.cleanup()  # whatever an earlier test left behind
        policy.reset()
        rpc.register_opts(CONF)
        db_options.set_defaults(CONF)
        CONF([], project='climate', default_config_files=[],
             default_config_dirs=[])
        self.tmpdir = tempfile.mkdtemp(prefix='climate-test-')
        self.db_path = os.path.join(self.tmpdir, 'climate.sqlite')
        self.connection = 'sqlite:///%s' % self.db_path
        values = {(name, group): value
                  for name, group, value in TEST_OVERRIDES}
        values[('connection', 'database')] = self.connection
        values.update({(name, group): value
                       for name, group, value in self.extra_overrides})
        for (name, group), value in values.items():
            self._override(name, group, value)

    def start(self):
        try:
            self.configure()
            schema.head_database(self.db_path)
            rpc.init()
            self._outdated = set()
            sa.event.listen(orm.Session, 'after_transaction_end',
                            self._check_bodies)
            self.manager = manager_service.ManagerService(
                host='climate-test-manager')
            self.manager.start()
            manager_api = rpcapi.ManagerAPI()
            # A fresh API's first call probes the bus within [api]
            # message_bus_timeout (5 s); with the whole suite on two cores
            # the in-process manager's first answer once took longer: a
            # 503 no test asked for.  Probed here within a bound of its
            # own, the tests start with the bus known up (those of the
            # probe make their own ManagerAPI).
            manager_api.ping(context.admin_context(), timeout=BUS_WARM_UP)
            self.app = api_app.setup_app(manager_api=manager_api)
        except Exception:
            self.stop()
            raise
        return self

    def stop(self):
        outdated = []
        try:
            if self.manager is not None:
                self.manager.stop()
                outdated = self.outdated_bodies()
        finally:
            if sa.event.contains(orm.Session, 'after_transaction_end',
                                 self._check_bodies):
                sa.event.remove(orm.Session, 'after_transaction_end',
                                self._check_bodies)
            outdated = sorted(set(outdated) | self._outdated)
            self.manager = None
            self.app = None
            rpc.cleanup()
            policy.reset()
            try:
                db_api.get_engine().dispose()
            except Exception:  # pragma: no cover - never configured
                pass
            for name, group in reversed(self._overridden):
                CONF.clear_override(name, group=group)
            self._overridden = []
            if self.tmpdir:
                shutil.rmtree(self.tmpdir, ignore_errors=True)
                self.tmpdir = None
        # every test's writes, whatever path they took, left the leases'
        # stored listing bodies current
        assert not outdated, 'leases listed with outdated bodies: %s' % (
            outdated,)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- HTTP ------------------------------------------------------------

    def request(self, method, path, body=None, raw=None, headers=None,
                persona='member', project='project-a', version=None):
        """One in-process HTTP request; returns a webob Response.

        ``body`` is sent as JSON, ``raw`` as given.  ``persona`` is a
        :data:`PERSONAS` key (or None for no identity headers at all).
        """
        req = webob.Request.blank(path, method=method)
        if persona is not None:
            for name, value in identity(persona, project).items():
                req.headers[name] = value
        if version is not None:
            req.headers['OpenStack-API-Version'] = 'reservation %s' % version
        if body is not None:
            raw = json.dumps(body)
        if raw is not None:
            req.body = raw.encode() if isinstance(raw, str) else raw
            req.content_type = 'application/json'
        for name, value in (headers or {}).items():
            req.headers[name] = value
        return req.get_response(self.app)

    # -- database --------------------------------------------------------

    def rows(self, model):
        """Every row of ``model`` (a climate.db.models class)."""
        ctx = context.admin_context()
        with db_api.reader(ctx) as session:
            return session.query(model).options(orm.undefer('*')).all()

    def snapshot(self):
        """Every column of every row of every table a lease change may
        write, sorted: equal snapshots mean nothing was written."""
        tables = {}
        for model in (models.Lease, models.Reservation, models.Event,
                      models.Allocation, models.NoopAction,
                      models.LedgerBooking, models.LedgerInventory,
                      models.UsageRecord,
                      models.ComputeHost,
                      models.HostCapability, models.ResourceProperty):
            columns = [c.key for c in sa.inspect(model).columns]
            tables[model.__tablename__] = sorted(
                (tuple((c, repr(getattr(row, c))) for c in columns)
                 for row in self.rows(model)), key=repr)
        return tables

    def settled_snapshot(self, timeout=30):
        """:meth:`snapshot` once the event engine has stopped writing
        (two reads 0.3 s apart equal): a lease just ACTIVE may still have
        its start's last rows to write, later on a slow machine."""
        deadline = time.monotonic() + timeout
        seen = self.snapshot()
        while True:
            time.sleep(0.3)
            now = self.snapshot()
            if now == seen:
                return now
            assert time.monotonic() < deadline, \
                'the database kept changing for %d s' % timeout
            seen = now

    def outdated_bodies(self):
        """Ids of leases whose stored listing body is not current."""
        with db_api.get_engine().connect() as conn:
            return lease_json.outdated(conn)

    def _check_bodies(self, session, transaction):
        # after every transaction of any thread, not just at the end: a body
        # left behind by one transaction may be re-rendered by a later one
        # (an event's claim by its completion)
        if transaction.parent is not None:
            return  # a savepoint's
        # a plain connection of its own: SQLite reads without a lock then,
        # even inside a writer() block
        engine = sa.create_engine(self.connection, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                self._outdated.update(lease_json.outdated(conn))
        finally:
            engine.dispose()

    def wait_for_status(self, lease_id, status, timeout=15, version=None):
        """Poll ``GET /v1/leases/{id}`` until the lease has ``status``
        (the in-process engine runs its events meanwhile); returns it.
        ``version``: the microversion asked (from 1.11 the lease types'
        states are shown as they are)."""
        deadline = time.monotonic() + timeout
        while True:
            lease = self.request('GET', '/v1/leases/' + lease_id,
                                 version=version).json['lease']
            if lease['status'] == status:
                return lease
            if time.monotonic() > deadline:
                pytest.fail('lease never got to %s: %r' % (status, lease))
            time.sleep(0.05)

    def noop_actions(self, lease_id=None):
        """(action, lease_id) of each noop plugin action, in order."""
        ctx = context.admin_context()
        return [(a.action, a.lease_id)
                for a in db_api.noop_action_list(ctx, lease_id)]

    def plugin(self, resource_type='noop'):
        """The manager's plugin object (to make it fail on purpose)."""
        return self.manager.plugins.get(resource_type)

    def book_slots(self, name, start, end, shape, count=1, providers=None,
                   affinity=None):
        """Instance slots booked straight into the capacity ledger
        (``slot_search.place`` on compute hosts) for a new noop lease over
        ``[start, end)`` (naive UTC datetimes): ``(lease id, reservation
        id, {provider: units})``.  Raises the ledger's Conflict when they
        do not fit."""
        from climate.db.ledger import booking
        from climate.db.ledger import inventory
        from climate.db.ledger import slot_search
        resp = self.request('POST', '/v1/leases', body=lease_body(
            name, start.strftime('%Y-%m-%d %H:%M'),
            end.strftime('%Y-%m-%d %H:%M')))
        assert resp.status_int == 201, resp.text
        lease = resp.json['lease']
        res_id = lease['reservations'][0]['id']
        ctx = context.admin_context()
        placed = booking.run(ctx, slot_search.place, res_id, lease['id'],
                             shape, count, start, end, affinity=affinity,
                             providers=providers, kind=inventory.COMPUTE_HOST)
        return lease['id'], res_id, placed

    def bookings(self, resource_class=None):
        """``[(provider, class, amount, start, end, reservation)]`` of the
        ledger, sorted."""
        rows = self.rows(models.LedgerBooking)
        return sorted((r.provider_id, r.resource_class, r.amount,
                       r.start_date, r.end_date, r.reservation_id)
                      for r in rows if resource_class in (
                          None, r.resource_class))


#: Identity headers of each test persona (noauth).
PERSONAS = {
    'admin': 'admin,member,reader',
    'member': 'member,reader',
    'reader': 'reader',
}


@pytest.fixture(scope='module')
def climate_env():
    """A ClimateEnvironment shared by the tests of one module."""
    with ClimateEnvironment() as env:
        yield env


def identity(persona, project='project-a'):
    return {'X-Project-Id': project,
            'X-User-Id': '%s-%s' % (persona, project),
            'X-Roles': PERSONAS[persona]}


def iso(delta_seconds=0, now=None):
    """UTC ISO 8601 (no offset) ``delta_seconds`` from now."""
    when = (now or dates.utcnow()) + datetime.timedelta(
        seconds=delta_seconds)
    return when.strftime('%Y-%m-%dT%H:%M:%S')


def lease_body(name='lease-1', start='now', end=None, **extra):
    """A valid create body with one noop reservation."""
    body = {'name': name, 'start_date': start,
            'end_date': end or '2099-01-01 00:00',
            'reservations': [{'resource_type': 'noop'}],
            'events': []}
    body.update(extra)
    return body


def closed_port(host='127.0.0.1'):
    """A local port nothing listens on (bound, then released): a Keystone
    that cannot be reached."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def password_auth_opts():
    """keystoneauth's password-plugin options, as it registers them when it
    loads the plugin for a group, so that a test can override them first.
    Some are required: unregister them after the test, or the next
    ``CONF()`` fails."""
    loader = ks_loading.get_plugin_loader('password')
    return [o._to_oslo_opt() for o in loader.get_options()]
