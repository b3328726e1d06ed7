"""The ``cinder`` volume backend: volume reservations as Cinder sees them.

**Pools** come from Cinder's ``GET /scheduler-stats/get_pools?detail=True``
with Climate's service credentials (an admin call).  A pool whose total
capacity Cinder reports as ``infinite`` or ``unknown`` cannot be booked
against: it is listed with ``total_capacity_gb`` 0 (nothing reservable).

**At the start** of a reservation ``<id>`` on pool ``P`` (the ledger chose
it), Climate makes, with its service credentials, a private volume type
``reservation:<id>`` that only the lease's project may use, whose extra
specs are the extra specs of the volume type the reservation asked for
(``volume_type``, else ``[volumes] default_volume_type``, else Cinder's
default type) plus::

    volume_backend_name  = <P's backend>           (CapabilitiesFilter)
    climate:reservation  = <id>                     (ClimateCinderFilter)
    climate:owner        = <project id>
    climate:pool         = <P, host@backend#pool>
    climate:reserved_gb  = <size_gb, the gigabytes reserved in all>
    climate:max_volumes  = <count>                  (when it is set)
    climate:start, climate:end = the lease window   (from the plugin)

Cinder's scheduler learns the reservation from that type alone
(``climate/cinder_filter``, see ``doc/source/cinder-filter.rst``): volumes
of the type land on ``P`` only, up to the reserved gigabytes, and volumes
of other types cannot take the part of ``P`` the reservation has not used
yet.  Then the reservation's pre-created volumes (``volumes``) are created
**as the lease's user** through its trust, of that type, with the
scheduler hint ``reservation=<id>`` and the metadata
``climate:reservation=<id>`` and ``climate:index=<n>`` by which a re-run
finds them instead of creating them twice; the start waits until they are
``available`` (a volume in ``error`` is deleted and the start retried).

**At the end**, every volume of the reservation's type, in any project
(the pre-created ones and those users created with the type), is:

``delete``    detached (through Nova when a server holds it, else by
              deleting Cinder's attachment), then deleted;
``snapshot``  detached, uploaded to a Glance image
              (``os-volume_upload_image``: ``reservation-<id>-<volume>``,
              raw, private), the image handed to the volume's project
              (owner) with the properties ``climate:reservation`` and
              ``climate:volume``, then the volume deleted.  Not a Cinder
              snapshot: Cinder deletes no volume that has snapshots (they
              depend on it on every back end), so the capacity would stay
              taken after the lease;
``retain``    retyped to the volume type the reservation was made of
              (no migration) and stripped of Climate's metadata: the
              project keeps it, outside the lease.

Then the private type is deleted.  Every step reads first and does only
what is missing, so a re-run (after a failure or a crash) completes; Cinder
(or Nova, or Keystone) failing or not answering raises
:class:`climate.exceptions.CloudUnavailable` and the event is retried.
"""

import datetime
import time

from cinderclient import exceptions as cinder_exc
from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc
from oslo_log import log as logging

from climate.clients import calls as cloud_calls
from climate.clients import cinder as cinder_clients
from climate import exceptions
from climate.plugins.virtual_volume.backends import base

LOG = logging.getLogger(__name__)

RESERVATION_KEY = 'climate:reservation'
OWNER_KEY = 'climate:owner'
POOL_KEY = 'climate:pool'
RESERVED_GB_KEY = 'climate:reserved_gb'
MAX_VOLUMES_KEY = 'climate:max_volumes'
START_KEY = 'climate:start'
END_KEY = 'climate:end'
INDEX_KEY = 'climate:index'
VOLUME_KEY = 'climate:volume'
BACKEND_KEY = 'volume_backend_name'
HINT = 'reservation'
TYPE_PREFIX = 'reservation:'
#: Glance reads a colon in a name filter as an operator: images are
#: named ``reservation-<id>-<volume id>``.
IMAGE_PREFIX = 'reservation-'
#: The pool's count of volumes when Cinder gives no limit.
MAX_VOLUMES = 2 ** 31 - 1
#: Seconds one Cinder call may take when ``[service_auth] timeout`` is unset.
CALL_TIMEOUT = 60
UNKNOWN = ('infinite', 'unknown', None, '')


def type_name(reservation_id):
    """The name of a reservation's private volume type."""
    return TYPE_PREFIX + reservation_id


def image_name(reservation_id, volume_id):
    """The name of the image ``on_end = snapshot`` makes of a volume."""
    return '%s%s-%s' % (IMAGE_PREFIX, reservation_id, volume_id)


class _Calls(cloud_calls.CloudCalls):
    """Turns Cinder, Nova and transport errors into CloudUnavailable."""

    def __init__(self, doing, service='Cinder'):
        super().__init__(doing, service, (cinder_exc.ClientException,
                                          nova_exc.ClientException,
                                          ks_exc.ClientException))


def _info(obj):
    if isinstance(obj, dict):
        return obj
    return obj.to_dict() if hasattr(obj, 'to_dict') else vars(obj)


def _float(value, default=0.0):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _iso(value):
    """A lease date (datetime or text) as ISO 8601 UTC text, None if
    absent."""
    if value in (None, ''):
        return None
    if isinstance(value, datetime.datetime):
        if value.utcoffset() is not None:
            value = value.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        return value.strftime('%Y-%m-%dT%H:%M:%SZ')
    return str(value)


def pool_view(pool):
    """A Cinder ``get_pools`` entry as the contract's pool dict."""
    info = _info(pool)
    caps = dict(info.get('capabilities') or {})
    name = info.get('name')
    total = caps.get('total_capacity_gb')
    total = 0.0 if total in UNKNOWN else _float(total)
    backend = caps.get('volume_backend_name') or (
        name.split('@', 1)[-1].split('#', 1)[0] if name else None)
    ratio = _float(caps.get('max_over_subscription_ratio'), 1.0)
    if not caps.get('thin_provisioning_support') or ratio < 1:
        ratio = 1.0
    extra = {k: v for k, v in caps.items() if k not in (
        'total_capacity_gb', 'free_capacity_gb', 'reserved_percentage',
        'max_over_subscription_ratio', 'allocated_capacity_gb',
        'provisioned_capacity_gb', 'timestamp')}
    extra.setdefault('max_volumes', MAX_VOLUMES)
    return {'name': name, 'backend': backend,
            'total_capacity_gb': total,
            'reserved_percentage': _float(caps.get('reserved_percentage')),
            'max_over_subscription_ratio': ratio,
            'capabilities': extra}


class CinderVolumeBackend(base.VolumeBackend):
    """Volume reservations in Cinder (see module)."""

    name = 'cinder'
    acts_in_cloud = True
    #: Seconds the start waits for its volumes to be available.
    wait_timeout = 120
    #: Pause between two looks at a volume.
    poll_interval = 0.5

    def __init__(self, conf):
        super().__init__(conf)
        self._cinder = None
        self._glance = None

    # -- plumbing ----------------------------------------------------------

    @property
    def cinder(self):
        """cinderclient on Climate's service session (made on first use)."""
        if self._cinder is None:
            with _Calls('connecting'):
                self._cinder = cinder_clients.service_client(
                    self.conf, timeout=CALL_TIMEOUT)
        return self._cinder

    @property
    def glance(self):
        """Glance's API on Climate's service session (``on_end =
        snapshot``), reached like Cinder (``[cinder] region_name``,
        ``interface``)."""
        if self._glance is None:
            from keystoneauth1 import adapter

            from climate.clients import keystone
            opts = self.conf.cinder
            with _Calls('connecting', 'Glance'):
                self._glance = adapter.Adapter(
                    keystone.service_session(self.conf), service_type='image',
                    interface=opts.interface, region_name=opts.region_name,
                    connect_retries=opts.connect_retries)
        return self._glance

    def user_cinder(self, user_session):
        """cinderclient acting as the lease's user."""
        return cinder_clients.client(user_session(), self.conf)

    def nova(self):
        """novaclient on Climate's service session (detaching)."""
        from climate.clients import nova as nova_clients
        return nova_clients.bounded_service_client(self.conf, CALL_TIMEOUT)

    def _wait(self, what, check):
        """Call ``check()`` until it answers something true; raise
        CloudUnavailable after :attr:`wait_timeout` seconds."""
        deadline = time.monotonic() + self.wait_timeout
        while True:
            answer = check()
            if answer:
                return answer
            if time.monotonic() >= deadline:
                raise exceptions.CloudUnavailable(
                    service='Cinder',
                    reason='%s: not done after %s s' % (what,
                                                        self.wait_timeout))
            time.sleep(self.poll_interval)

    # -- the contract ------------------------------------------------------

    def check(self):
        with _Calls('listing pools'):
            self.cinder.pools.list(detailed=False)

    def pools(self):
        with _Calls('listing pools'):
            found = self.cinder.pools.list(detailed=True)
        return [pool_view(p) for p in found]

    def _types(self):
        with _Calls('listing volume types'):
            return list(self.cinder.volume_types.list(is_public=None))

    def _type(self, name):
        for vtype in self._types():
            if vtype.name == name:
                return vtype
        return None

    def volume_type(self, name):
        """The volume type ``name``, or the default one (``[volumes]
        default_volume_type``, else Cinder's)."""
        if name in (None, ''):
            name = self.conf.volumes.default_volume_type or None
        if name is None:
            with _Calls('reading the default volume type'):
                vtype = self.cinder.volume_types.default()
        else:
            vtype = self._type(name)
            if vtype is None:
                with _Calls('reading volume type %s' % name):
                    try:
                        vtype = self.cinder.volume_types.get(name)
                    except cinder_exc.NotFound:
                        vtype = None
            if vtype is None:
                raise exceptions.MalformedParameter(
                    param='volume_type',
                    reason='Cinder has no volume type %s.' % name)
        info = _info(vtype)
        return {'id': info.get('id'), 'name': info.get('name'),
                'extra_specs': dict(info.get('extra_specs') or {})}

    def type_specs(self, reservation, project_id, pool):
        """The extra specs of the reservation's private type."""
        source = self.volume_type(reservation.get('volume_type'))
        specs = {k: v for k, v in source['extra_specs'].items()
                 if not k.startswith('climate:')}
        specs.update({
            RESERVATION_KEY: reservation['id'],
            OWNER_KEY: project_id,
            RESERVED_GB_KEY: str(int(reservation['size_gb'])),
        })
        if reservation.get('count'):
            specs[MAX_VOLUMES_KEY] = str(int(reservation['count']))
        if pool:
            specs[POOL_KEY] = pool['name']
            if pool.get('backend'):
                specs[BACKEND_KEY] = pool['backend']
        for key, names in ((START_KEY, ('lease_start', 'start_date')),
                           (END_KEY, ('lease_end', 'end_date'))):
            for name in names:
                value = _iso(reservation.get(name))
                if value:
                    specs[key] = value
                    break
        return specs

    def _type_up(self, reservation, project_id, pool):
        name = type_name(reservation['id'])
        specs = self.type_specs(reservation, project_id, pool)
        vtype = self._type(name)
        if vtype is None:
            with _Calls('creating volume type %s' % name):
                try:
                    vtype = self.cinder.volume_types.create(
                        name, description='Climate reservation %s' %
                        reservation['id'], is_public=False)
                except cinder_exc.Conflict:
                    vtype = None
            vtype = vtype or self._type(name)
            if vtype is None:
                raise exceptions.CloudUnavailable(
                    service='Cinder', reason='volume type %s neither made '
                                             'nor found' % name)
        with _Calls('setting the extra specs of %s' % name):
            current = vtype.get_keys()
            missing = {k: v for k, v in specs.items() if current.get(k) != v}
            if missing:
                vtype.set_keys(missing)
        with _Calls('giving project %s access to %s' % (project_id, name)):
            access = {_info(a).get('project_id') for a in
                      self.cinder.volume_type_access.list(vtype)}
            if project_id not in access:
                try:
                    self.cinder.volume_type_access.add_project_access(
                        vtype, project_id)
                except cinder_exc.Conflict:
                    pass
        return vtype

    def start(self, reservation, project_id, pool, user_session):
        """Publish the reservation to Cinder, then create its pre-created
        volumes as the user."""
        rid = reservation['id']
        self._type_up(reservation, project_id, pool)
        specs = reservation.get('volumes') or []
        if not specs:
            return {'volume_ids': []}
        with _Calls('acting as the lease\'s user', 'Keystone'):
            user = self.user_cinder(user_session)
        ids = []
        for index, spec in enumerate(specs):
            ids.append(self._precreate(user, rid, index, spec))
        for vid in ids:
            self._wait('volume %s becoming available' % vid,
                       lambda vid=vid: self._available(user, vid))
        return {'volume_ids': ids}

    def _find(self, cinder, rid, index=None, all_projects=False):
        metadata = {RESERVATION_KEY: rid}
        if index is not None:
            metadata[INDEX_KEY] = str(index)
        opts = {'metadata': metadata}
        if all_projects:
            opts['all_tenants'] = 1
        with _Calls('listing the volumes of reservation %s' % rid):
            return list(cinder.volumes.list(search_opts=opts))

    def _precreate(self, user, rid, index, spec):
        found = [v for v in self._find(user, rid, index)
                 if v.status not in ('deleting', 'error_deleting')]
        if found:
            return found[0].id
        size = int(spec.get('size_gb') or spec.get('size'))
        with _Calls('creating volume %s of reservation %s' % (
                spec.get('name'), rid)):
            volume = user.volumes.create(
                size, name=spec.get('name'),
                volume_type=type_name(rid),
                snapshot_id=spec.get('snapshot_id'),
                imageRef=spec.get('image_id'),
                metadata={RESERVATION_KEY: rid, INDEX_KEY: str(index)},
                scheduler_hints={HINT: rid})
        return volume.id

    def _available(self, cinder, vid):
        with _Calls('reading volume %s' % vid):
            volume = cinder.volumes.get(vid)
        if volume.status == 'available' or volume.status == 'in-use':
            return True
        if volume.status == 'error':
            with _Calls('deleting volume %s in error' % vid):
                try:
                    cinder.volumes.delete(vid)
                except cinder_exc.NotFound:
                    pass
            raise exceptions.CloudUnavailable(
                service='Cinder', reason='volume %s went to error (deleted; '
                                         'made again on retry)' % vid)
        return False

    # -- the end -----------------------------------------------------------

    def _volumes(self, rid, vtype, deleting=False):
        """Every volume of the reservation: of its type, or carrying its
        metadata, in any project (those being deleted too when
        ``deleting``)."""
        seen = {}
        if vtype is not None:
            with _Calls('listing the volumes of type %s' % vtype.name):
                for v in self.cinder.volumes.list(search_opts={
                        # (Cinder 2026.1 answers nothing to volume_type=,
                        # by name or id: its column is volume_type_id)
                        'all_tenants': 1, 'volume_type_id': vtype.id}):
                    seen[v.id] = v
        for v in self._find(self.cinder, rid, all_projects=True):
            seen.setdefault(v.id, v)
        return [v for v in seen.values()
                if deleting or v.status not in ('deleting', 'deleted')]

    def publish(self, reservation, project_id, pool):
        """Make the reservation's private type say what the reservation
        is now (a grown ``size_gb`` or ``count``, a moved end): the
        extra specs that changed are set again.

        Cinder changes no extra spec of a volume type that a volume uses
        (400 "Volume Type is currently in use."): once the project has
        made a volume of the reservation, the change is refused (409)."""
        try:
            self._type_up(reservation, project_id, pool)
        except exceptions.CloudUnavailable as exc:
            if 'currently in use' not in str(exc):
                raise
            raise exceptions.InvalidStateUpdate(
                id=reservation['id'], status='active',
                reason='Reservation %s is active and volumes of its type %s '
                       'exist: Cinder changes no extra spec of a volume type '
                       'in use, so its end, size_gb and count stay. Make '
                       'another lease for more.' % (
                           reservation['id'], type_name(reservation['id'])))

    def end(self, reservation, on_end):
        """Apply ``on_end`` to every volume of the reservation, then
        delete its type.

        :returns: ``dict(image_ids=[...])``: the images ``snapshot`` made
            (all of them, a re-run's too), else empty.
        """
        rid = reservation['id']
        vtype = self._type(type_name(rid))
        volumes = self._volumes(rid, vtype)
        if on_end == 'retain':
            base_type = self._base_type(reservation) if volumes else None
            for volume in volumes:
                self._retain(rid, volume, base_type)
        else:
            for volume in volumes:
                self._detach(volume)
            if on_end == 'snapshot':
                self._upload_all(rid, volumes)
            for volume in volumes:
                self._delete(volume)
        if on_end != 'retain':
            self._wait('the volumes of reservation %s being deleted' % rid,
                       lambda: not self._volumes(rid, vtype, deleting=True))
        elif vtype is not None:
            self._wait('the volumes of reservation %s leaving its type' % rid,
                       lambda: not [v for v in self._volumes(rid, vtype)
                                    if v.volume_type == vtype.name or
                                    v.volume_type == vtype.id])
        if vtype is not None:
            with _Calls('deleting volume type %s' % vtype.name):
                try:
                    self.cinder.volume_types.delete(vtype)
                except cinder_exc.NotFound:
                    pass
        images = self._images(rid) if on_end == 'snapshot' else []
        return {'image_ids': sorted(i['id'] for i in images)}

    def _base_type(self, reservation):
        """The type retained volumes go back to: the reservation's
        source type, else the default one (the source was deleted)."""
        try:
            return self.volume_type(reservation.get('volume_type'))
        except exceptions.InvalidInput:
            return self.volume_type(None)

    def _detach(self, volume):
        attachments = list(getattr(volume, 'attachments', None) or [])
        if not attachments:
            return
        for attachment in attachments:
            server = attachment.get('server_id')
            aid = attachment.get('attachment_id') or attachment.get('id')
            done = False
            if server:
                with _Calls('detaching volume %s from server %s' % (
                        volume.id, server), 'Nova'):
                    try:
                        self.nova().volumes.delete_server_volume(
                            server, volume.id)
                        done = True
                    except nova_exc.NotFound:
                        pass
            if not done and aid:
                with _Calls('deleting attachment %s' % aid):
                    try:
                        self.cinder.attachments.delete(aid)
                    except cinder_exc.NotFound:
                        pass
        self._wait('volume %s being detached' % volume.id,
                   lambda: self._detached(volume.id))

    def _detached(self, vid):
        with _Calls('reading volume %s' % vid):
            try:
                volume = self.cinder.volumes.get(vid)
            except cinder_exc.NotFound:
                return True
        return not getattr(volume, 'attachments', None) and \
            volume.status not in ('in-use', 'detaching')

    def _delete(self, volume):
        if volume.status in ('deleting',):
            return
        with _Calls('deleting volume %s' % volume.id):
            try:
                self.cinder.volumes.delete(volume.id)
            except cinder_exc.NotFound:
                pass

    # -- on_end = snapshot: volumes to Glance images -------------------------

    def _glance_call(self, method, path, doing, **kw):
        with _Calls(doing, 'Glance'):
            return self.glance.request(path, method, timeout=CALL_TIMEOUT,
                                       **kw)

    def _images(self, rid, volume_id=None):
        """The reservation's images (in any project): those handed over
        (its properties), and, of ``volume_id``, one still being made
        (its name)."""
        found = self._glance_call(
            'GET', '/v2/images', 'listing the images of reservation %s' % rid,
            params={RESERVATION_KEY: rid, 'limit': 1000}).json()['images']
        if volume_id is None:
            return found
        found = [i for i in found if i.get(VOLUME_KEY) == volume_id]
        return found or self._glance_call(
            'GET', '/v2/images', 'looking up image %s' % image_name(
                rid, volume_id),
            params={'name': image_name(rid, volume_id)}).json()['images']

    def _upload_all(self, rid, volumes):
        """Upload each volume to its image (at most one per volume: a
        re-run finds the image by name), wait until all are done, then
        hand each image to its volume's project.  An image that failed
        (Cinder deletes it, or it is ``killed``) is made again by the
        retry."""
        images = {}
        for volume in volumes:
            if volume.status == 'error':
                continue    # Cinder made nothing: nothing to keep
            found = []
            for image in self._images(rid, volume.id):
                if image['status'] in ('killed', 'deleted'):
                    # a failed upload's: its volume is uploaded again
                    self._glance_call('DELETE', '/v2/images/%s' % image['id'],
                                      'deleting image %s' % image['id'],
                                      raise_exc=False)
                else:
                    found.append(image['id'])
            images[volume.id] = found[0] if found else \
                self._upload(rid, volume)
        self._wait('the volumes of reservation %s uploaded to images' % rid,
                   lambda: all(self._uploaded(vid, iid)
                               for vid, iid in images.items()))
        owners = {v.id: getattr(v, 'os-vol-tenant-attr:tenant_id', None)
                  for v in volumes}
        for vid, iid in images.items():
            self._hand_over(rid, vid, iid, owners[vid])

    def _upload(self, rid, volume):
        name = image_name(rid, volume.id)
        with _Calls('uploading volume %s to image %s' % (volume.id, name)):
            _resp, body = self.cinder.volumes.upload_to_image(
                volume, False, name, 'bare', 'raw', 'private', False)
        return body['os-volume_upload_image']['image_id']

    def _uploaded(self, vid, iid):
        with _Calls('reading volume %s' % vid):
            try:
                volume = self.cinder.volumes.get(vid)
            except cinder_exc.NotFound:
                volume = None
        if volume is not None and volume.status == 'uploading':
            return False
        resp = self._glance_call('GET', '/v2/images/%s' % iid,
                                 'reading image %s' % iid, raise_exc=False)
        status = resp.json().get('status') if resp.status_code == 200 \
            else 'deleted'
        if status == 'active':
            return True
        if volume is not None and status in ('killed', 'deleted'):
            raise exceptions.CloudUnavailable(
                service='Cinder', reason='the upload of volume %s to image '
                                         '%s failed (made again on retry)'
                                         % (vid, iid))
        return False

    def _hand_over(self, rid, vid, iid, owner):
        """The image becomes the project's, and says whose it was."""
        image = self._glance_call('GET', '/v2/images/%s' % iid,
                                  'reading image %s' % iid).json()
        want = {RESERVATION_KEY: rid, VOLUME_KEY: vid}
        if owner:
            want['owner'] = owner
        ops = [{'op': 'replace' if key in image else 'add',
                'path': '/' + key, 'value': value}
               for key, value in sorted(want.items())
               if image.get(key) != value]
        if ops:
            self._glance_call(
                'PATCH', '/v2/images/%s' % iid,
                'handing image %s to project %s' % (iid, owner), json=ops,
                headers={'Content-Type':
                         'application/openstack-images-v2.1-json-patch'})

    def _retain(self, rid, volume, base_type):
        meta = getattr(volume, 'metadata', None) or {}
        drop = [k for k in (RESERVATION_KEY, INDEX_KEY) if k in meta]
        if drop:
            with _Calls('dropping the metadata of volume %s' % volume.id):
                self.cinder.volumes.delete_metadata(volume, drop)
        if volume.volume_type == type_name(rid) and \
                volume.status != 'retyping':
            with _Calls('retyping volume %s to %s' % (volume.id,
                                                      base_type['name'])):
                self.cinder.volumes.retype(volume, base_type['name'],
                                           'never')
