"""The ``cinder`` volume backend against an in-memory Cinder.

``FakeCinder`` answers the cinderclient calls the backend makes (pools,
volume types and their access and extra specs, volumes, uploads to
images, attachments) and ``FakeGlance`` the image calls of ``on_end =
snapshot``; the service client and the user's client are two views of
it (the user's sees its project only).  Failures are injected per call.
"""

import pytest
from cinderclient import exceptions as cinder_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg

from climate.clients import cinder as cinder_clients
from climate.conf import clients as clients_conf
from climate.conf import volumes as volumes_conf
from climate import exceptions
from climate.plugins.virtual_volume.backends import cinder as backend_mod

RID = 'a1b2c3d4-0000-4000-8000-000000000001'
PROJECT = 'project-a'
POOL = {'name': 'cloud@ssd#ssd', 'backend': 'ssd'}


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def to_dict(self):
        return {k: v for k, v in vars(self).items()
                if not k.startswith('_')}


class VType(Obj):
    def get_keys(self):
        return dict(self.extra_specs)

    def set_keys(self, specs):
        self._cloud.calls.append(('set_keys', self.name, dict(specs)))
        self.extra_specs.update(specs)


class Manager:
    def __init__(self, cloud):
        self.cloud = cloud


class Pools(Manager):
    def list(self, detailed=False):
        self.cloud.hit('pools')
        return [Obj(**p) for p in self.cloud.pools]


class Types(Manager):
    def list(self, is_public=None):
        self.cloud.hit('types')
        return list(self.cloud.types.values())

    def default(self):
        self.cloud.hit('types')
        return self.cloud.types['__DEFAULT__']

    def get(self, name):
        self.cloud.hit('types')
        for t in self.cloud.types.values():
            if name in (t.id, t.name):
                return t
        raise cinder_exc.NotFound(404)

    def create(self, name, description=None, is_public=True):
        self.cloud.hit('create_type')
        vtype = VType(id='type-%d' % len(self.cloud.types), name=name,
                      is_public=is_public, extra_specs={}, _cloud=self.cloud)
        self.cloud.types[name] = vtype
        self.cloud.access[vtype.id] = set()
        return vtype

    def delete(self, vtype):
        self.cloud.hit('delete_type')
        if any(v.volume_type == vtype.name
               for v in self.cloud.volumes.values()):
            raise cinder_exc.BadRequest(400, 'VolumeTypeInUse')
        self.cloud.types.pop(vtype.name, None)


class Access(Manager):
    def list(self, vtype):
        return [Obj(project_id=p, volume_type_id=vtype.id)
                for p in self.cloud.access[vtype.id]]

    def add_project_access(self, vtype, project):
        self.cloud.calls.append(('access', vtype.name, project))
        self.cloud.access[vtype.id].add(project)


class Volumes(Manager):
    def __init__(self, cloud, project=None):
        super().__init__(cloud)
        self.project = project

    def _mine(self):
        return [v for v in self.cloud.volumes.values()
                if self.project is None or v.project_id == self.project]

    def list(self, search_opts=None):
        self.cloud.hit('volumes')
        opts = search_opts or {}
        if self.project is None:
            assert opts.get('all_tenants') == 1
        out = []
        for v in self._mine():
            self.cloud.tick(v)      # time passes as Cinder is looked at
        for v in self._mine():
            meta = opts.get('metadata') or {}
            if any(v.metadata.get(k) != val for k, val in meta.items()):
                continue
            assert 'volume_type' not in opts     # Cinder ignores it
            if 'volume_type_id' in opts:
                vt = self.cloud.types.get(v.volume_type)
                if vt is None or vt.id != opts['volume_type_id']:
                    continue
            out.append(v)
        return out

    def get(self, vid):
        self.cloud.hit('volumes')
        if vid not in self.cloud.volumes:
            raise cinder_exc.NotFound(404)
        volume = self.cloud.volumes[vid]
        self.cloud.tick(volume)
        return volume

    def create(self, size, name=None, volume_type=None, snapshot_id=None,
               imageRef=None, metadata=None, scheduler_hints=None):
        self.cloud.hit('create_volume')
        vtype = self.cloud.types.get(volume_type)
        assert vtype is not None and (
            vtype.is_public or self.project in self.cloud.access[vtype.id])
        vid = 'vol-%d' % self.cloud.counter
        self.cloud.counter += 1
        volume = Obj(id=vid, size=size, name=name, volume_type=volume_type,
                     metadata=dict(metadata or {}), status='creating',
                     project_id=self.project, attachments=[],
                     hints=dict(scheduler_hints or {}))
        self.cloud.volumes[vid] = volume
        return volume

    def delete(self, vid):
        self.cloud.hit('delete_volume')
        volume = self.cloud.volumes.get(getattr(vid, 'id', vid))
        if volume is None:
            raise cinder_exc.NotFound(404)
        assert not volume.attachments
        volume.status = 'deleting'

    def delete_metadata(self, volume, keys):
        for k in keys:
            self.cloud.volumes[volume.id].metadata.pop(k, None)

    def upload_to_image(self, volume, force, name, container_format,
                        disk_format, visibility, protected):
        self.cloud.hit('upload')
        volume = self.cloud.volumes[volume.id]
        assert volume.status == 'available' and not force
        assert (container_format, disk_format, visibility) == (
            'bare', 'raw', 'private')
        iid = 'img-%d' % len(self.cloud.images)
        self.cloud.images[iid] = {'id': iid, 'name': name,
                                  'status': 'saving', 'owner': 'service'}
        volume.status = 'uploading'
        volume._image = iid
        return None, {'os-volume_upload_image': {'image_id': iid}}

    def retype(self, volume, new_type, policy):
        self.cloud.calls.append(('retype', volume.id, new_type, policy))
        self.cloud.volumes[volume.id].status = 'retyping'
        self.cloud.volumes[volume.id]._retype_to = new_type


class Snapshots(Manager):
    def list(self, search_opts=None):
        return [s for s in self.cloud.snapshots
                if s.volume_id == search_opts['volume_id']]

    def create(self, volume_id, force=False, name=None, metadata=None):
        self.cloud.hit('snapshot')
        snap = Obj(id='snap-%d' % len(self.cloud.snapshots),
                   volume_id=volume_id, name=name, metadata=metadata)
        self.cloud.snapshots.append(snap)
        return snap


class Attachments(Manager):
    def delete(self, aid):
        self.cloud.calls.append(('detach', aid))
        for v in self.cloud.volumes.values():
            v.attachments = [a for a in v.attachments if a['id'] != aid]
            if not v.attachments and v.status == 'in-use':
                v.status = 'available'


class Client:
    def __init__(self, cloud, project=None):
        self.pools = Pools(cloud)
        self.volume_types = Types(cloud)
        self.volume_type_access = Access(cloud)
        self.volumes = Volumes(cloud, project)
        self.volume_snapshots = Snapshots(cloud)
        self.attachments = Attachments(cloud)


class Response:
    def __init__(self, body, status=200):
        self.body, self.status_code = body, status

    def json(self):
        return self.body


class FakeGlance:
    """``keystoneauth1.adapter.Adapter.request`` on Glance's images."""

    def __init__(self, cloud):
        self.cloud = cloud

    def request(self, path, method, timeout=None, params=None, json=None,
                headers=None, raise_exc=True):
        self.cloud.hit('glance')
        images = self.cloud.images
        if path == '/v2/images':
            wanted = {k: v for k, v in (params or {}).items()
                      if k != 'limit'}
            return Response({'images': [
                dict(i) for i in images.values()
                if all(i.get(k) == v for k, v in wanted.items())]})
        iid = path.rsplit('/', 1)[1]
        if iid not in images:
            if raise_exc:
                raise ks_exc.NotFound()
            return Response({}, 404)
        if method == 'DELETE':
            del images[iid]
            return Response({}, 204)
        if method == 'PATCH':
            assert headers['Content-Type'] == \
                'application/openstack-images-v2.1-json-patch'
            for op in json:
                images[iid][op['path'][1:]] = op['value']
        return Response(dict(images[iid]))


class FakeCinder:
    def __init__(self):
        self.pools = []
        self.types = {'__DEFAULT__': VType(
            id='default', name='__DEFAULT__', is_public=True,
            extra_specs={'thin': 'true'}, _cloud=self)}
        self.access = {'default': set()}
        self.volumes = {}
        self.snapshots = []
        self.images = {}
        self.calls = []
        self.counter = 0
        self.down = set()
        self.create_errors = 0

    def hit(self, what):
        self.calls.append((what,))
        if what in self.down or 'all' in self.down:
            raise cinder_exc.ClientException(503, 'Cinder is down')

    def tick(self, volume):
        """Time passes for a volume: creation, deletion and retype end."""
        if volume.status == 'creating':
            if self.create_errors:
                self.create_errors -= 1
                volume.status = 'error'
            else:
                volume.status = 'available'
        elif volume.status == 'deleting':
            self.volumes.pop(volume.id, None)
        elif volume.status == 'uploading':
            self.images[volume._image]['status'] = 'active'
            volume.status = 'available'
        elif volume.status == 'retyping':
            volume.volume_type = volume._retype_to
            volume.status = 'available'

    def settle(self):
        for volume in list(self.volumes.values()):
            self.tick(volume)


@pytest.fixture
def cloud(monkeypatch):
    fake = FakeCinder()
    monkeypatch.setattr(cinder_clients, 'service_client',
                        lambda conf=None, timeout=None: Client(fake))
    monkeypatch.setattr(cinder_clients, 'client',
                        lambda sess, conf=None, version=None:
                        Client(fake, project=sess))
    return fake


@pytest.fixture
def backend(cloud):
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    volumes_conf.register_opts(conf)
    conf([], default_config_files=[])
    b = backend_mod.CinderVolumeBackend(conf)
    b._glance = FakeGlance(cloud)
    b.poll_interval = 0
    b.wait_timeout = 0.5
    return b


def reservation(**kw):
    out = {'id': RID, 'size_gb': 10, 'count': 2, 'volume_type': None,
           'on_end': 'delete', 'volumes': None,
           'start_date': '2026-11-25T10:00:00Z',
           'end_date': '2026-11-25T12:00:00Z'}
    out.update(kw)
    return out


def user():
    return PROJECT     # the fake "session" is the project it acts in


# -- pools, volume types -----------------------------------------------------

def test_pools_from_cinder(backend, cloud):
    cloud.pools = [
        {'name': 'cloud@ssd#ssd', 'capabilities': {
            'total_capacity_gb': 1000, 'free_capacity_gb': 900,
            'reserved_percentage': 10, 'thin_provisioning_support': True,
            'max_over_subscription_ratio': '2.0',
            'volume_backend_name': 'ssd', 'storage_protocol': 'iSCSI',
            'timestamp': 'x'}},
        {'name': 'cloud@fake#fake', 'capabilities': {
            'total_capacity_gb': 'infinite', 'reserved_percentage': 100,
            'max_over_subscription_ratio': 20}},
    ]
    ssd, fake = backend.pools()
    assert ssd == {'name': 'cloud@ssd#ssd', 'backend': 'ssd',
                   'total_capacity_gb': 1000.0, 'reserved_percentage': 10.0,
                   'max_over_subscription_ratio': 2.0,
                   'capabilities': {'thin_provisioning_support': True,
                                    'volume_backend_name': 'ssd',
                                    'storage_protocol': 'iSCSI',
                                    'max_volumes': 2 ** 31 - 1}}
    # capacity Cinder cannot tell is not reservable; no thin provisioning:
    # no over-subscription
    assert fake['total_capacity_gb'] == 0
    assert fake['backend'] == 'fake'
    assert fake['max_over_subscription_ratio'] == 1.0


def test_volume_type(backend, cloud):
    assert backend.volume_type(None) == {
        'id': 'default', 'name': '__DEFAULT__',
        'extra_specs': {'thin': 'true'}}
    assert backend.volume_type('__DEFAULT__')['id'] == 'default'
    with pytest.raises(exceptions.InvalidInput) as err:
        backend.volume_type('gold')
    assert 'gold' in str(err.value)


def test_cinder_down_is_cloud_unavailable(backend, cloud):
    cloud.down.add('all')
    for call in (backend.pools, backend.check,
                 lambda: backend.volume_type('x'),
                 lambda: backend.start(reservation(), PROJECT, POOL, user),
                 lambda: backend.end(reservation(), 'delete')):
        with pytest.raises(exceptions.CloudUnavailable):
            call()


def test_keystone_failure_is_cloud_unavailable(backend, cloud):
    def no_trust():
        raise ks_exc.Unauthorized('trust expired')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start(reservation(volumes=[{'name': 'a', 'size_gb': 1}]),
                      PROJECT, POOL, no_trust)


# -- start -------------------------------------------------------------------

def test_start_publishes_the_reservation_type(backend, cloud):
    assert backend.start(reservation(), PROJECT, POOL, user) == {
        'volume_ids': []}
    vtype = cloud.types['reservation:' + RID]
    assert vtype.is_public is False
    assert cloud.access[vtype.id] == {PROJECT}
    assert vtype.extra_specs == {
        'thin': 'true',                        # the source type's
        'volume_backend_name': 'ssd',
        'climate:reservation': RID, 'climate:owner': PROJECT,
        'climate:pool': 'cloud@ssd#ssd', 'climate:reserved_gb': '10',
        'climate:max_volumes': '2',
        'climate:start': '2026-11-25T10:00:00Z',
        'climate:end': '2026-11-25T12:00:00Z'}


def test_type_specs_without_count_and_with_the_plugins_window(backend):
    import datetime
    specs = backend.type_specs(reservation(
        count=None, start_date=None, end_date=None,
        lease_start=datetime.datetime(2026, 11, 25, 10, 0, 5),
        lease_end=datetime.datetime(2026, 11, 25, 11, 0)), PROJECT, POOL)
    assert specs['climate:reserved_gb'] == '10'
    assert 'climate:max_volumes' not in specs
    assert (specs['climate:start'], specs['climate:end']) == (
        '2026-11-25T10:00:05Z', '2026-11-25T11:00:00Z')


def test_publish_sets_what_changed(backend, cloud):
    backend.start(reservation(), PROJECT, POOL, user)
    backend.publish(reservation(size_gb=30, count=3,
                                end_date='2026-11-25T14:00:00Z'),
                    PROJECT, POOL)
    specs = cloud.types['reservation:' + RID].extra_specs
    assert (specs['climate:reserved_gb'], specs['climate:max_volumes'],
            specs['climate:end']) == ('30', '3', '2026-11-25T14:00:00Z')


def test_publish_on_a_type_in_use_is_a_409(backend, cloud):
    backend.start(reservation(), PROJECT, POOL, user)
    vtype = cloud.types['reservation:' + RID]

    def in_use(specs):
        raise cinder_exc.BadRequest(400, 'Volume Type is currently in use.')

    vtype.set_keys = in_use
    with pytest.raises(exceptions.InvalidStateUpdate) as info:
        backend.publish(reservation(size_gb=30), PROJECT, POOL)
    assert 'Cinder changes no extra spec of a volume type in use' in str(
        info.value)


def test_start_is_idempotent(backend, cloud):
    res = reservation(volumes=[{'name': 'a', 'size_gb': 3},
                               {'name': 'b', 'size_gb': 5}])
    first = backend.start(res, PROJECT, POOL, user)
    calls = len([c for c in cloud.calls if c[0] in (
        'create_type', 'create_volume', 'set_keys', 'access')])
    second = backend.start(res, PROJECT, POOL, user)
    assert first == second
    assert len(first['volume_ids']) == 2
    assert len([c for c in cloud.calls if c[0] in (
        'create_type', 'create_volume', 'set_keys', 'access')]) == calls


def test_precreated_volumes_as_the_user_on_the_reservation(backend, cloud):
    res = reservation(volumes=[{'name': 'data', 'size_gb': 3,
                                'image_id': 'img'}])
    answer = backend.start(res, PROJECT, POOL, user)
    (vid,) = answer['volume_ids']
    volume = cloud.volumes[vid]
    assert volume.project_id == PROJECT
    assert volume.status == 'available'
    assert volume.volume_type == 'reservation:' + RID
    assert volume.hints == {'reservation': RID}
    assert volume.metadata == {'climate:reservation': RID,
                               'climate:index': '0'}


def test_half_done_start_completes(backend, cloud):
    res = reservation(volumes=[{'name': 'a', 'size_gb': 1},
                               {'name': 'b', 'size_gb': 1}])
    # the type exists without its specs or access (crash after create)
    backend.cinder.volume_types.create('reservation:' + RID, is_public=False)
    cloud.down.add('create_volume')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.start(res, PROJECT, POOL, user)
    cloud.down.clear()
    answer = backend.start(res, PROJECT, POOL, user)
    assert len(answer['volume_ids']) == 2
    vtype = cloud.types['reservation:' + RID]
    assert cloud.access[vtype.id] == {PROJECT}
    assert vtype.extra_specs['climate:reservation'] == RID


def test_volume_in_error_is_made_again(backend, cloud):
    res = reservation(volumes=[{'name': 'a', 'size_gb': 1}])
    cloud.create_errors = 1
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.start(res, PROJECT, POOL, user)
    assert 'error' in str(err.value)
    cloud.settle()
    answer = backend.start(res, PROJECT, POOL, user)
    (vid,) = answer['volume_ids']
    assert cloud.volumes[vid].status == 'available'
    assert len(cloud.volumes) == 1


# -- end ---------------------------------------------------------------------

def _started(backend, cloud, **kw):
    res = reservation(volumes=[{'name': 'a', 'size_gb': 3}], **kw)
    backend.start(res, PROJECT, POOL, user)
    # a volume the project made itself on the reservation's type
    Client(cloud, PROJECT).volumes.create(
        2, name='own', volume_type='reservation:' + RID)
    cloud.settle()
    return res


def test_end_delete_detaches_then_deletes_everything(backend, cloud):
    res = _started(backend, cloud)
    attached = next(iter(cloud.volumes.values()))
    attached.status = 'in-use'
    attached.attachments = [{'id': 'att-1', 'server_id': None}]
    assert backend.end(res, 'delete') == {'image_ids': []}
    assert cloud.volumes == {}
    assert 'reservation:' + RID not in cloud.types
    assert ('detach', 'att-1') in cloud.calls
    # again: nothing to do
    assert backend.end(res, 'delete') == {'image_ids': []}


def test_end_detaches_through_nova(backend, cloud, monkeypatch):
    res = _started(backend, cloud)
    attached = next(iter(cloud.volumes.values()))
    attached.status = 'in-use'
    attached.attachments = [{'id': 'att-1', 'server_id': 'srv-1'}]
    detached = []

    class NovaVolumes:
        def delete_server_volume(self, server, vid):
            detached.append((server, vid))
            attached.attachments = []
            attached.status = 'available'
    monkeypatch.setattr(backend, 'nova', lambda: Obj(volumes=NovaVolumes()))
    backend.end(res, 'delete')
    assert detached == [('srv-1', attached.id)]
    assert cloud.volumes == {}


def test_end_retain_hands_the_volumes_over(backend, cloud):
    res = _started(backend, cloud)
    assert backend.end(res, 'retain') == {'image_ids': []}
    assert len(cloud.volumes) == 2
    for volume in cloud.volumes.values():
        assert volume.volume_type == '__DEFAULT__'
        assert 'climate:reservation' not in volume.metadata
    assert 'reservation:' + RID not in cloud.types


def test_end_snapshot_uploads_to_images_then_deletes(backend, cloud):
    res = _started(backend, cloud)
    vids = sorted(cloud.volumes)
    attached = cloud.volumes[vids[0]]
    attached.status = 'in-use'
    attached.attachments = [{'id': 'att-1', 'server_id': None}]
    for v in cloud.volumes.values():
        setattr(v, 'os-vol-tenant-attr:tenant_id', v.project_id)
    answer = backend.end(res, 'snapshot')
    assert answer == {'image_ids': sorted(cloud.images)}
    assert len(cloud.images) == 2
    # the volumes are gone: a Cinder snapshot would have kept them
    assert cloud.volumes == {} and cloud.snapshots == []
    assert 'reservation:' + RID not in cloud.types
    assert {(i['name'], i['status'], i['owner'], i['climate:reservation'],
             i['climate:volume']) for i in cloud.images.values()} == {
        ('reservation-%s-%s' % (RID, vid), 'active', PROJECT, RID, vid)
        for vid in vids}
    # again: the same images, none made twice
    assert backend.end(res, 'snapshot') == answer
    assert len(cloud.images) == 2


def test_end_snapshot_half_done_makes_each_image_once(backend, cloud):
    res = _started(backend, cloud)
    vids = sorted(cloud.volumes)
    cloud.down.add('delete_volume')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.end(res, 'snapshot')
    uploads = len([c for c in cloud.calls if c == ('upload',)])
    assert uploads == 2
    cloud.down.clear()
    answer = backend.end(res, 'snapshot')
    assert len([c for c in cloud.calls if c == ('upload',)]) == uploads
    assert len(answer['image_ids']) == 2 and cloud.volumes == {}
    assert {i['climate:volume'] for i in cloud.images.values()} == set(vids)


def test_end_snapshot_uploads_again_after_a_failed_upload(backend, cloud):
    res = _started(backend, cloud)
    vid = sorted(cloud.volumes)[0]
    cloud.images['img-old'] = {'id': 'img-old', 'status': 'killed',
                               'owner': 'service',
                               'name': 'reservation-%s-%s' % (RID, vid)}
    answer = backend.end(res, 'snapshot')
    assert 'img-old' not in cloud.images
    assert len(answer['image_ids']) == 2 and cloud.volumes == {}


def test_end_snapshot_skips_a_volume_in_error(backend, cloud):
    res = _started(backend, cloud)
    broken = next(iter(cloud.volumes.values()))
    broken.status = 'error'
    answer = backend.end(res, 'snapshot')
    assert len(answer['image_ids']) == 1
    assert cloud.volumes == {}


def test_end_snapshot_with_glance_down_is_retried(backend, cloud):
    res = _started(backend, cloud)
    cloud.down.add('glance')
    with pytest.raises(exceptions.CloudUnavailable) as err:
        backend.end(res, 'snapshot')
    assert 'Glance' in str(err.value)
    assert len(cloud.volumes) == 2      # nothing deleted before its image
    cloud.down.clear()
    assert len(backend.end(res, 'snapshot')['image_ids']) == 2


def test_end_with_cinder_down_is_retried(backend, cloud):
    res = _started(backend, cloud)
    cloud.down.add('delete_volume')
    with pytest.raises(exceptions.CloudUnavailable):
        backend.end(res, 'delete')
    cloud.down.clear()
    backend.end(res, 'delete')
    assert cloud.volumes == {}
    assert 'reservation:' + RID not in cloud.types


def test_end_retain_when_the_source_type_is_gone(backend, cloud):
    cloud.types['gold'] = VType(id='gold', name='gold', is_public=True,
                                extra_specs={'tier': 'gold'}, _cloud=cloud)
    res = _started(backend, cloud, volume_type='gold')
    assert cloud.types['reservation:' + RID].extra_specs['tier'] == 'gold'
    del cloud.types['gold']
    backend.end(res, 'retain')
    assert {v.volume_type for v in cloud.volumes.values()} == {'__DEFAULT__'}
