"""ClimateCinderFilter without Cinder: fake backend states, volume types
and volumes.

Cinder is not installed in Climate's environment, so minimal
``cinder.scheduler.filters`` (``BaseBackendFilter``), ``...capacity_filter``
(a ``CapacityFilter`` comparing the size with ``free_capacity_gb``),
``cinder.db`` (volume types and volumes from lists the tests fill) and
``cinder.context`` are put in ``sys.modules`` while the filter module is
imported; the module itself is the one cinder-scheduler loads.  Its
database calls were also run against the harness's Cinder (2026.1).
"""

import datetime
import importlib
import sys
import types

import pytest
from oslo_config import cfg

RID = 'c0f1c1f2-0000-4000-8000-000000000001'
OTHER = 'c0f1c1f2-0000-4000-8000-000000000002'
OWNER = 'project-a'
POOL = 'cinder@ssd#ssd'
POOL2 = 'cinder@hdd#hdd'

NOW = datetime.datetime.now(datetime.timezone.utc)


def iso(delta_minutes):
    return (NOW + datetime.timedelta(minutes=delta_minutes)).strftime(
        '%Y-%m-%dT%H:%M:%SZ')


class _BaseBackendFilter:
    run_filter_once_per_request = False

    def filter_all(self, objs, props):
        for obj in objs:
            if self.backend_passes(obj, props):
                yield obj


class _CapacityFilter:
    def backend_passes(self, backend, props):
        if props.get('new_size'):
            wanted = int(props['new_size']) - int(props['size'])
        else:
            wanted = props['size']
        return backend.free_capacity_gb >= wanted


class FakeDB:
    def __init__(self):
        self.types = []
        self.volumes = []
        self.calls = []

    def volume_type_get_all(self, ctxt, inactive=False, list_result=False,
                            **kwargs):
        self.calls.append(('types', ctxt.is_admin))
        assert list_result
        return list(self.types)

    def volume_get_all(self, ctxt, filters=None, **kwargs):
        self.calls.append(('volumes', ctxt.is_admin))
        wanted = filters['volume_type_id']
        return [v for v in self.volumes if v['volume_type_id'] in wanted]


class Context:
    def __init__(self, project_id=OWNER, is_admin=False):
        self.project_id = project_id
        self.is_admin = is_admin

    def elevated(self):
        return Context(self.project_id, True)


DB = FakeDB()


@pytest.fixture(scope='module')
def module():
    names = ('cinder', 'cinder.context', 'cinder.db', 'cinder.scheduler',
             'cinder.scheduler.filters',
             'cinder.scheduler.filters.capacity_filter')
    fake = {name: types.ModuleType(name) for name in names}
    fake['cinder.scheduler.filters'].BaseBackendFilter = _BaseBackendFilter
    fake['cinder.scheduler.filters.capacity_filter'].CapacityFilter = \
        _CapacityFilter
    fake['cinder.scheduler.filters'].capacity_filter = \
        fake['cinder.scheduler.filters.capacity_filter']
    fake['cinder.context'].get_admin_context = lambda: Context(None, True)
    for attr in ('volume_type_get_all', 'volume_get_all'):
        setattr(fake['cinder.db'], attr,
                lambda *a, _attr=attr, **k: getattr(DB, _attr)(*a, **k))
    fake['cinder'].context = fake['cinder.context']
    fake['cinder'].db = fake['cinder.db']
    fake['cinder'].scheduler = fake['cinder.scheduler']
    fake['cinder.scheduler'].filters = fake['cinder.scheduler.filters']
    saved = {name: sys.modules.get(name) for name in fake}
    sys.modules.update(fake)
    name = 'climate.cinder_filter.climate_cinder_filter'
    try:
        sys.modules.pop(name, None)
        mod = importlib.import_module(name)
    finally:
        for key, old in saved.items():
            if old is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = old
    yield mod
    sys.modules.pop(name, None)


@pytest.fixture
def db():
    DB.types, DB.volumes, DB.calls = [], [], []
    yield DB


@pytest.fixture
def make(module, db):
    def make_filter(**options):
        conf = cfg.ConfigOpts()
        module.register_opts(conf)
        conf([], default_config_files=[])
        for key, value in options.items():
            conf.set_override(key, value, group='climate')
        return module.ClimateCinderFilter(conf)
    return make_filter


def reserve(db, rid=RID, owner=OWNER, pool=POOL, gb=10, start=-5, end=55,
            count=None):
    """Publish a reservation as Climate does: its private volume type."""
    vtype = {'id': 'type-' + rid, 'name': 'reservation:' + rid,
             'extra_specs': {'climate:reservation': rid,
                             'climate:owner': owner, 'climate:pool': pool,
                             'climate:reserved_gb': str(gb),
                             'climate:start': iso(start),
                             'climate:end': iso(end),
                             'volume_backend_name': pool.split('@')[1]
                             .split('#')[0]}}
    if count is not None:
        vtype['extra_specs']['climate:max_volumes'] = str(count)
    db.types.append(vtype)
    return vtype


def volume(db, vtype, size, vid=None, status='available', host=POOL):
    db.volumes.append({'id': vid or 'vol-%d' % len(db.volumes),
                       'size': size, 'volume_type_id': vtype['id'],
                       'status': status, 'host': host})


class Backend:
    def __init__(self, name=POOL, free=100):
        self.host = name
        self.cluster_name = None
        self.backend_id = name
        self.free_capacity_gb = free

    def __repr__(self):
        return self.host


PLAIN = {'id': 'default-type', 'name': '__DEFAULT__', 'extra_specs': {}}


def props(size=1, vtype=None, hint=None, project=OWNER, volume_id='new-vol',
          new_size=None, raw_hints=None):
    out = {'context': Context(project),
           'size': size,
           'volume_type': vtype if vtype is not None else PLAIN,
           'request_spec': {'volume_id': volume_id,
                            'volume_properties': {'project_id': project,
                                                  'size': size}},
           'scheduler_hints': raw_hints if raw_hints is not None else (
               {'reservation': hint} if hint else {})}
    if new_size is not None:
        out['new_size'] = new_size
    return out


def passing(f, backends, properties):
    return [repr(b) for b in f.filter_all(backends, properties)]


def test_module_imports_only_stdlib_oslo_cinder(module):
    source = open(module.__file__).read()
    imports = {line.split()[1].split('.')[0] for line in source.splitlines()
               if line.startswith(('import ', 'from '))}
    assert imports == {'datetime', 'oslo_config', 'oslo_log', 'cinder'}


def test_reservation_type_lands_only_on_its_pool(make, db):
    vt = reserve(db)
    f = make()
    backends = [Backend(POOL), Backend(POOL2)]
    assert passing(f, backends, props(5, vtype=vt)) == [POOL]
    # the hint with the type: the same
    assert passing(f, backends, props(5, vtype=vt, hint=RID)) == [POOL]
    # the hint as Cinder's API passes a repeated one (a list of one)
    assert passing(f, backends, props(5, vtype=vt, raw_hints={
        'reservation': [RID]})) == [POOL]
    # the database is read as an admin, once per request
    assert all(admin for _, admin in db.calls)


def test_cluster_pool_names_match(make, db):
    vt = reserve(db, pool='cluster1@ssd#ssd')
    backend = Backend('host1@ssd#ssd')
    backend.cluster_name = backend.backend_id = 'cluster1@ssd#ssd'
    assert passing(make(), [backend], props(1, vtype=vt)) == [
        'host1@ssd#ssd']


def test_up_to_the_reserved_size_then_refused(make, db):
    vt = reserve(db, gb=10)
    f = make()
    volume(db, vt, 4)
    volume(db, vt, 3)
    # the volume being scheduled is in Cinder's database already: not
    # counted twice
    volume(db, vt, 3, vid='new-vol', status='creating', host=None)
    # a create the scheduler refused holds nothing; one being scheduled
    # (no host yet) or that failed on its back end does
    volume(db, vt, 5, status='error', host=None)
    assert passing(f, [Backend()], props(3, vtype=vt)) == [POOL]
    assert passing(f, [Backend()], props(4, vtype=vt)) == []
    volume(db, vt, 1, status='creating', host=None)
    assert passing(f, [Backend()], props(3, vtype=vt)) == []
    db.volumes[-1].update(status='error', host=POOL)
    assert passing(f, [Backend()], props(3, vtype=vt)) == []
    db.volumes.pop()
    # an extend of a reservation's volume: the others plus its new size
    db.volumes.pop(1)
    assert passing(f, [Backend()], props(3, vtype=vt, new_size=6)) == [POOL]
    assert passing(f, [Backend()], props(3, vtype=vt, new_size=7)) == []


def test_at_most_max_volumes(make, db):
    vt = reserve(db, gb=10, count=2)
    f = make()
    volume(db, vt, 1)
    volume(db, vt, 1, vid='new-vol')     # the one being scheduled
    assert passing(f, [Backend()], props(1, vtype=vt)) == [POOL]
    volume(db, vt, 1)
    # 8 GB left, but the reservation holds its 2 volumes
    assert passing(f, [Backend()], props(1, vtype=vt)) == []
    # an extend makes no new volume
    assert passing(f, [Backend()], props(1, vtype=vt, new_size=3)) == [POOL]
    # without climate:max_volumes, no limit on the number
    other = reserve(db, rid=OTHER, gb=10)
    for _ in range(5):
        volume(db, other, 1)
    assert passing(f, [Backend()], props(1, vtype=other)) == [POOL]


def test_another_project_refused(make, db):
    vt = reserve(db)
    f = make()
    assert passing(f, [Backend()], props(1, vtype=vt,
                                         project='project-b')) == []
    assert passing(f, [Backend()], props(1, hint=RID,
                                         project='project-b')) == []


def test_outside_the_window_refused(make, db):
    early = reserve(db, rid=RID, start=10, end=70)
    late = reserve(db, rid=OTHER, start=-70, end=-10)
    f = make()
    assert passing(f, [Backend()], props(1, vtype=early)) == []
    assert passing(f, [Backend()], props(1, vtype=late)) == []


def test_unknown_or_ended_reservation_refused(make, db):
    f = make()
    assert passing(f, [Backend()], props(1, hint=RID)) == []


def test_hint_needs_the_reservation_type(make, db):
    reserve(db)
    f = make()
    # Cinder keeps no trace of hints: a volume of the default type could
    # not be counted against the reservation
    assert passing(f, [Backend()], props(1, hint=RID)) == []


def test_hint_and_type_naming_different_reservations(make, db):
    vt = reserve(db)
    reserve(db, rid=OTHER)
    f = make()
    assert passing(f, [Backend()], props(1, vtype=vt, hint=OTHER)) == []
    assert passing(f, [Backend()], props(1, vtype=vt, raw_hints={
        'reservation': [RID, OTHER]})) == []


def test_unreserved_create_keeps_off_unused_reserved_capacity(make, db):
    vt = reserve(db, gb=30)
    f = make()
    # 100 GB free, 30 reserved and unused: 70 for anyone else
    assert passing(f, [Backend(free=100)], props(70)) == [POOL]
    assert passing(f, [Backend(free=100)], props(71)) == []
    # the reservation used 20 of its 30 (Cinder's free shrank by 20)
    volume(db, vt, 20)
    assert passing(f, [Backend(free=80)], props(70)) == [POOL]
    assert passing(f, [Backend(free=80)], props(71)) == []
    # another pool is not concerned
    assert passing(f, [Backend(POOL2, free=100)], props(100)) == [POOL2]


def test_unreserved_extend_keeps_off_reserved_capacity(make, db):
    reserve(db, gb=30)
    f = make()
    assert passing(f, [Backend(free=100)], props(10, new_size=80)) == [POOL]
    assert passing(f, [Backend(free=100)], props(10, new_size=81)) == []


def test_reservations_not_active_protect_nothing(make, db):
    reserve(db, gb=30, start=10, end=70)
    reserve(db, rid=OTHER, gb=30, start=-70, end=-10)
    assert passing(make(), [Backend(free=100)], props(100)) == [POOL]


def test_protection_can_be_switched_off(make, db):
    reserve(db, gb=30)
    f = make(protect_reserved_capacity=False)
    assert passing(f, [Backend(free=100)], props(100)) == [POOL]
    assert db.calls == []


def test_several_reservations_on_one_pool(make, db):
    a = reserve(db, gb=30)
    b = reserve(db, rid=OTHER, owner='project-b', gb=20)
    f = make()
    volume(db, a, 30)
    # a used all of its 30; b's 20 remain protected
    assert passing(f, [Backend(free=70)], props(50)) == [POOL]
    assert passing(f, [Backend(free=70)], props(51)) == []
    # each owner on its own reservation
    assert passing(f, [Backend(free=70)], props(1, vtype=a)) == []
    assert passing(f, [Backend(free=70)], props(
        20, vtype=b, project='project-b')) == [POOL]


def test_backend_passes_one_at_a_time(make, db):
    vt = reserve(db)
    f = make()
    assert f.backend_passes(Backend(), props(1, vtype=vt))
    assert not f.backend_passes(Backend(POOL2), props(1, vtype=vt))


def test_naive_and_unreadable_dates(module):
    assert module._when('2026-01-01 10:00:00').tzinfo is not None
    assert module._when('garbage') is None
    assert module._when(None) is None


def test_entry_point_for_cinder_scheduler(module):
    """Cinder loads filters from the entry points of ``sys.path``: the
    dist-info beside the module declares it."""
    import configparser
    import os
    here = os.path.dirname(module.__file__)
    parser = configparser.ConfigParser()
    parser.optionxform = str
    parser.read(os.path.join(here, 'climate_cinder_filter.dist-info',
                             'entry_points.txt'))
    assert dict(parser['cinder.scheduler.filters']) == {
        'ClimateCinderFilter': 'climate_cinder_filter:ClimateCinderFilter'}
    assert module.ClimateCinderFilter.__name__ == 'ClimateCinderFilter'
