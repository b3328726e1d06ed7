"""Pre-created servers of ``virtual:instance`` reservations in Nova (seed 000).

A reservation given as ``server_id`` (a server of the project) or
``server`` (a boot request Climate performs as the lease's user) holds one
slot of the server's flavor on one host of the ledger.  Nova is brought to
it in four steps, each idempotent (the event engine retries):

* **boot** (after the create, ``server`` only): the server is booted as the
  user through the lease's trust, with the metadata
  ``climate:reservation=<id>``, by which a retried boot finds it again;
* **hold** (after the create, and again at every healing pass until the
  start): the server is shelved.  With Nova's default
  ``shelved_offload_time = 0`` it is offloaded at once
  (``SHELVED_OFFLOADED``): it keeps its ports, volumes and image but uses
  no host.  A server the user unshelves before the start is shelved again;
* **wake** (the start): an aggregate named after the reservation holds the
  booked host, with ``climate:server=<server uuid>`` beside the usual
  ``climate:reservation`` and ``climate:owner``, so that ``ClimateFilter``
  lets this server, and no other server without the reservation, onto the
  host; the server is unshelved onto that host (compute API 2.91, admin)
  and Climate waits until it runs there;
* **release** (the end): the reservation's ``on_end`` action -- ``delete``
  (default), ``shelve`` or ``snapshot`` (an image named
  ``reservation-<id>``, then delete) -- and the aggregate is removed.

A server deleted meanwhile is no failure of Climate's: the step answers
``server_error`` (stored on the reservation, which is flagged
``missing_resources``), and the end finds nothing to do.
"""

import time

from oslo_log import log as logging

from climate.clients import nova as nova_clients
from climate import exceptions
from climate.plugins.virtual_instance.backends import nova_common

LOG = logging.getLogger(__name__)

#: Aggregate metadata naming the one server a pre-created reservation
#: lets onto its host (read by ClimateFilter).
SERVER_KEY = 'climate:server'
#: Server metadata tying a server Climate booted to its reservation.
METADATA_KEY = 'climate:reservation'
#: Compute API microversion of unshelve onto a named host.
UNSHELVE_HOST_VERSION = '2.91'
#: Seconds a start waits for the server to run on its host, an end for
#: a snapshot or a deletion.
WAIT_TIMEOUT = 180
POLL_INTERVAL = 1.0

SHELVED = ('SHELVED', 'SHELVED_OFFLOADED')
#: States a server can be shelved from.
SHELVABLE = ('ACTIVE', 'SHUTOFF', 'PAUSED', 'SUSPENDED')
#: What ``on_end`` may say.
END_ACTIONS = ('delete', 'shelve', 'snapshot')
#: What :meth:`ServerActions.release` also takes from Climate itself: the
#: server stays as it is (a stack suspended by Heat keeps its servers),
#: only what :meth:`ServerActions.wake` made goes.
KEEP = 'keep'


def _status(server):
    return nova_common.field(server, 'status', 'UNKNOWN')


def _task(server):
    return nova_common.field(server, 'OS-EXT-STS:task_state', None)


def _host(server):
    return nova_common.field(server, 'OS-EXT-SRV-ATTR:host', None)


def _fault(server):
    fault = nova_common.field(server, 'fault', {}) or {}
    return fault.get('message') if isinstance(fault, dict) else str(fault)


def snapshot_name(reservation_id):
    """The name of the image ``on_end: snapshot`` makes:
    ``reservation-<id>`` (Glance reads a name with a colon as an operator
    when filtering, so not the flavor's ``reservation:<id>``)."""
    return 'reservation-' + reservation_id


def nics_of(networks):
    """Nova's ``networks`` of a boot request (``"auto"``, ``"none"`` or
    ``[{"uuid"|"port"|"fixed_ip"|"tag": ...}]``) as novaclient's
    ``nics``."""
    if networks is None or isinstance(networks, str):
        return networks or 'auto'
    keys = {'uuid': 'net-id', 'port': 'port-id', 'fixed_ip': 'v4-fixed-ip',
            'tag': 'tag'}
    return [{keys[k]: v for k, v in net.items()} for net in networks]


class ServerActions:
    """The four steps (see module) for a :class:`nova.NovaInstanceBackend`,
    whose service client, aggregate helpers and configuration they use."""

    def __init__(self, backend):
        self.backend = backend
        self._unshelver = None

    @property
    def nova(self):
        return self.backend.nova

    def _nova_at(self, version):
        """A service client at ``version`` (unshelving onto a host needs
        a newer microversion than Climate's ``[nova] api_version``)."""
        if self._unshelver is None:
            with nova_common.Calls('connecting'):
                self._unshelver = nova_clients.bounded_service_client(
                    self.backend.conf, nova_common.CALL_TIMEOUT,
                    version=version)
        return self._unshelver

    def _get(self, server_id):
        """The server, None when Nova no longer knows it (or it is
        deleted)."""
        try:
            with nova_common.Calls('reading server %s' % server_id):
                server = self.nova.servers.get(server_id)
        except exceptions.CloudUnavailable as exc:
            if nova_common.nova_not_found(exc):
                return None
            raise
        if _status(server) in ('DELETED', 'SOFT_DELETED'):
            return None
        return server

    # -- reading ---------------------------------------------------------

    def server(self, server_id):
        """See :meth:`base.InstanceBackend.server`."""
        server = self._get(server_id)
        if server is None:
            raise exceptions.InvalidInput(
                reason='server_id: server %s could not be found.' %
                server_id)
        flavor = nova_common.field(server, 'flavor', {}) or {}
        if 'vcpus' in flavor:
            # compute API 2.47 and later embed the flavor
            shape = nova_common.flavor_shape(
                flavor.get('original_name') or server_id, flavor['vcpus'],
                flavor['ram'], flavor.get('disk'), flavor.get('ephemeral'),
                flavor.get('swap'), flavor.get('extra_specs'))
        else:
            shape = self.backend.flavor(flavor['id'])
        return {'id': server.id, 'project_id': nova_common.field(
                    server, 'tenant_id', None),
                'status': _status(server), 'flavor': shape}

    # -- boot and hold -----------------------------------------------------

    def _booted(self, user_nova, reservation):
        name = reservation['server']['name']
        with nova_common.Calls('listing servers named %s' % name):
            found = user_nova.servers.list(search_opts={'name': name})
        return [s for s in found
                if (nova_common.field(s, 'metadata', {}) or {})
                .get(METADATA_KEY) == reservation['id']]

    def boot(self, reservation, project_id, user_session):
        """See :meth:`base.InstanceBackend.boot`."""
        request = reservation['server']
        user_nova = nova_clients.client(user_session(), self.backend.conf)
        found = self._booted(user_nova, reservation)
        if found:
            return found[0].id
        meta = dict(request.get('metadata') or {})
        meta[METADATA_KEY] = reservation['id']
        kwargs = {}
        for key in ('key_name', 'user_data', 'security_groups'):
            if request.get(key) is not None:
                kwargs[key] = request[key]
        with nova_common.Calls('booting server %s for reservation %s' % (
                request['name'], reservation['id'])):
            server = user_nova.servers.create(
                request['name'], request['imageRef'], request['flavorRef'],
                meta=meta, nics=nics_of(request.get('networks')), **kwargs)
        LOG.info('Reservation %s: booted server %s as its user',
                 reservation['id'], server.id)
        return server.id

    def hold(self, reservation):
        """See :meth:`base.InstanceBackend.hold`."""
        sid = reservation['server_id']
        server = self._get(sid)
        if server is None:
            return {'server_status': 'DELETED',
                    'server_error': 'Server %s was deleted before the lease '
                                    'started.' % sid}
        status = _status(server)
        if status == 'ERROR':
            return {'server_status': status,
                    'server_error': 'Server %s is in error: %s' % (
                        sid, _fault(server) or 'no reason given')}
        if status in SHELVABLE and _task(server) is None:
            with nova_common.Calls('shelving server %s' % sid):
                self.nova.servers.shelve(sid)
            LOG.info('Reservation %s: server %s shelved until the start',
                     reservation['id'], sid)
            status = 'SHELVING'
        return {'server_status': status, 'server_error': None}

    # -- wake --------------------------------------------------------------

    def _wait(self, sid, done, what):
        """Poll the server until ``done(server)`` (None: gone) is true."""
        deadline = time.monotonic() + WAIT_TIMEOUT
        while True:
            server = self._get(sid)
            if done(server):
                return server
            if server is not None and _status(server) == 'ERROR':
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='server %s went into ERROR while '
                    '%s: %s' % (sid, what, _fault(server)))
            if time.monotonic() > deadline:
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='server %s is %s (task %s) %d s '
                    'after %s' % (sid, server and _status(server),
                                  server and _task(server), WAIT_TIMEOUT,
                                  what))
            time.sleep(POLL_INTERVAL)

    def wake(self, reservation, project_id, host, user_session,
             move_running=False):
        """See :meth:`base.InstanceBackend.wake`."""
        rid, sid = reservation['id'], reservation['server_id']
        service = nova_common.service(host)
        agg = self.backend.aggregate_up(rid, project_id, [service],
                                        extra={SERVER_KEY: sid})
        server = self._get(sid)
        if server is not None and _task(server) is not None:
            # still shelving (the hold's, or its user's action): what to do
            # next depends on where that ends, so wait for it first
            server = self._wait(sid, lambda s: s is None or
                                _task(s) is None, 'settling')
        if move_running and server is not None and \
                _status(server) in SHELVABLE and _host(server) != service:
            # never shelved before the start (or started since): it runs
            # outside the reservation, and only a shelved server can be
            # sent to the reserved host
            with nova_common.Calls('shelving server %s' % sid):
                self.nova.servers.shelve(sid)
            server = self._wait(sid, lambda s: s is None or (
                _status(s) in SHELVED and _task(s) is None), 'shelving')
        if server is None:
            return {'server_status': 'DELETED', 'aggregate_id': agg.id,
                    'server_error': 'Server %s was deleted before the lease '
                                    'started.' % sid}
        if _status(server) in SHELVED and _task(server) is None:
            if _status(server) == 'SHELVED':
                # not offloaded yet: it still sits on a host, and only an
                # offloaded server may be sent to another one
                with nova_common.Calls('offloading server %s' % sid):
                    self.nova.servers.shelve_offload(sid)
                server = self._wait(sid, lambda s: s is None or (
                    _status(s) == 'SHELVED_OFFLOADED' and _task(s) is None),
                    'offloading')
        if server is not None and _status(server) == 'SHELVED_OFFLOADED' \
                and _task(server) is None:
            with nova_common.Calls('unshelving server %s onto %s' % (
                    sid, service)):
                self._nova_at(UNSHELVE_HOST_VERSION).servers.unshelve(
                    sid, host=service)
            LOG.info('Reservation %s: unshelving server %s onto %s', rid,
                     sid, service)

        def done(s):
            if s is not None and _status(s) == 'SHELVED_OFFLOADED' and \
                    _task(s) is None:
                # Nova took the unshelve (task "unshelving") and gave up:
                # the scheduler found no room on the host
                raise exceptions.CloudUnavailable(
                    service='Nova', reason='server %s could not be '
                    'unshelved onto %s: %s' % (sid, service, _fault(s) or
                                               'no valid host'))
            return s is None or (_status(s) in ('ACTIVE', 'SHUTOFF') and
                                 _task(s) is None)

        server = self._wait(sid, done, 'unshelving')
        if server is None:
            return {'server_status': 'DELETED', 'aggregate_id': agg.id,
                    'server_error': 'Server %s was deleted while the lease '
                                    'started.' % sid}
        answer = {'server_status': _status(server), 'aggregate_id': agg.id,
                  'server_error': None}
        if _host(server) and _host(server) != service:
            # the user unshelved it elsewhere before the start: it runs,
            # but not on what was reserved for it
            answer['server_error'] = (
                'Server %s was started by its user before the lease and '
                'runs outside the reserved capacity.' % sid)
        return answer

    # -- release -----------------------------------------------------------

    def snapshot(self, reservation, owner=None):
        """An image of the reservation's server named
        :func:`snapshot_name` (made once: a retried end finds it, even
        once the server is gone), waited for until Nova is done with it;
        its id, or None when there is neither image nor server.  Nova
        makes it in Climate's service project; given ``owner`` (a project
        id), it is then that project's (:meth:`give`)."""
        name = snapshot_name(reservation['id'])
        try:
            with nova_common.Calls('looking up image %s' % name, 'Glance'):
                image = self.nova.glance.find_image(name).id
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise
            image = None
        sid = reservation['server_id']
        if image is None and self._get(sid) is None:
            return None
        if image is None:
            with nova_common.Calls('snapshotting server %s' % sid):
                image = self.nova.servers.create_image(
                    sid, name, metadata={METADATA_KEY: reservation['id']})
            self._wait(sid, lambda s: s is None or _task(s) is None,
                       'its snapshot')
        if owner is not None:
            self.give(image, owner)
        return image

    def give(self, image_id, project_id):
        """Make the image ``project_id``'s (Glance's ``owner``, which an
        admin may change): its users then see and use it.  Giving it
        again is harmless."""
        client = self.nova.client
        with nova_common.Calls('giving image %s to project %s' % (
                image_id, project_id), 'Glance'):
            client.session.patch(
                '/v2/images/%s' % image_id,
                endpoint_filter={'service_type': 'image',
                                 'interface': 'public',
                                 'region_name': client.region_name},
                json=[{'op': 'replace', 'path': '/owner',
                       'value': project_id}],
                headers={'Content-Type':
                         'application/openstack-images-v2.1-json-patch'})

    def _delete(self, sid, wait=True):
        try:
            with nova_common.Calls('deleting server %s' % sid):
                self.nova.servers.delete(sid)
        except exceptions.CloudUnavailable as exc:
            if not nova_common.nova_not_found(exc):
                raise
        if wait:
            self._wait(sid, lambda s: s is None, 'its deletion')

    def discard(self, reservation):
        """See :meth:`base.InstanceBackend.discard`."""
        if reservation.get('server_id'):
            self._delete(reservation['server_id'], wait=False)
            LOG.info('Reservation %s deleted before its start: server %s '
                     'deleted', reservation['id'], reservation['server_id'])

    def release(self, reservation):
        """See :meth:`base.InstanceBackend.release`."""
        rid, sid = reservation['id'], reservation.get('server_id')
        action = reservation.get('on_end') or 'delete'
        answer = {'server_status': 'DELETED', 'snapshot_id':
                  reservation.get('snapshot_id')}
        server = self._get(sid) if sid else None
        if server is not None and action != KEEP:
            if action == 'shelve':
                if _status(server) not in SHELVED:
                    if _task(server) is not None:
                        self._wait(sid, lambda s: s is None or
                                   _task(s) is None, 'its task')
                    with nova_common.Calls('shelving server %s' % sid):
                        self.nova.servers.shelve(sid)
                answer['server_status'] = 'SHELVED'
            else:
                if action == 'snapshot':
                    answer['snapshot_id'] = self.snapshot(reservation)
                self._delete(sid)
        self.backend.aggregate_down(rid)
        LOG.info('Reservation %s ended: server %s %s', rid, sid,
                 {'delete': 'deleted', 'shelve': 'shelved',
                  'snapshot': 'snapshotted and deleted',
                  KEEP: 'kept as it is'}[action])
        return answer
