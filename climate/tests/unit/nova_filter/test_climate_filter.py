"""ClimateFilter without Nova: fake host states and request specs.

Nova is not installed in Climate's environment, so a minimal
``nova.scheduler.filters`` (just ``BaseHostFilter``) is put in
``sys.modules`` while the filter module is imported; the module itself is
the one nova-scheduler loads.  The real thing runs in
``climate/tests/integration/test_nova_backend.py``.
"""

import importlib
import sys
import types

import pytest
from oslo_config import cfg

RID = 'b0f1c1f2-0000-4000-8000-000000000001'
OTHER = 'b0f1c1f2-0000-4000-8000-000000000002'
OWNER = 'project-a'


class _BaseHostFilter:
    run_filter_once_per_request = False
    RUN_ON_REBUILD = False


@pytest.fixture(scope='module')
def climate_filter():
    fake = {name: types.ModuleType(name)
            for name in ('nova', 'nova.scheduler', 'nova.scheduler.filters')}
    fake['nova.scheduler.filters'].BaseHostFilter = _BaseHostFilter
    fake['nova'].scheduler = fake['nova.scheduler']
    fake['nova.scheduler'].filters = fake['nova.scheduler.filters']
    saved = {name: sys.modules.get(name) for name in fake}
    sys.modules.update(fake)
    try:
        sys.modules.pop('climate.nova_filter.climate_filter', None)
        module = importlib.import_module('climate.nova_filter.climate_filter')
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    yield module
    sys.modules.pop('climate.nova_filter.climate_filter', None)


@pytest.fixture
def make(climate_filter):
    def make_filter(**options):
        conf = cfg.ConfigOpts()
        climate_filter.register_opts(conf)
        conf([], default_config_files=[])
        for key, value in options.items():
            conf.set_override(key, value, group='climate')
        return climate_filter.ClimateFilter(conf)
    return make_filter


class Aggregate:
    def __init__(self, name, **metadata):
        self.name = name
        self.metadata = metadata


def reservation(rid=RID, owner=OWNER):
    return Aggregate(rid, **{'climate:reservation': rid,
                             'climate:owner': owner})


def freepool(name='freepool', marked=True):
    return Aggregate(name, **({'climate:freepool': 'true'} if marked else {}))


class Host:
    def __init__(self, *aggregates):
        self.aggregates = list(aggregates)


class Flavor:
    def __init__(self, **extra_specs):
        self.extra_specs = extra_specs


FLAVOR_SPEC = 'aggregate_instance_extra_specs:reservation'


class Spec:
    """Like nova.objects.RequestSpec: hints are lists of strings."""

    def __init__(self, project=OWNER, reservation=None, raw_hints=None,
                 flavor=None, instance=None):
        self.project_id = project
        self.instance_uuid = instance
        self.scheduler_hints = raw_hints if raw_hints is not None else (
            {'reservation': [reservation]} if reservation else {})
        # an instance reservation's private flavor names the reservation
        self.flavor = Flavor(**({FLAVOR_SPEC: flavor} if flavor else {}))

    def get_scheduler_hint(self, name, default=None):
        value = self.scheduler_hints.get(name, default)
        if isinstance(value, list) and len(value) == 1:
            return value[0]
        return value


def test_module_imports_nothing_of_climate(climate_filter):
    source = open(climate_filter.__file__).read()
    imports = [line.split()[1] for line in source.splitlines()
               if line.startswith(('import ', 'from '))]
    assert sorted(set(imports)) == ['nova.scheduler', 'oslo_config',
                                    'oslo_log']


def test_hinted_request_lands_only_on_its_reservation(make):
    f = make()
    assert f.host_passes(Host(reservation()), Spec(reservation=RID))
    # other reservation, freepool, plain host: never
    assert not f.host_passes(Host(reservation(OTHER)), Spec(reservation=RID))
    assert not f.host_passes(Host(freepool()), Spec(reservation=RID))
    assert not f.host_passes(Host(), Spec(reservation=RID))
    assert not f.host_passes(Host(Aggregate('az1')), Spec(reservation=RID))


def test_hinted_request_of_another_project_goes_nowhere(make):
    f = make()
    assert not f.host_passes(Host(reservation()),
                             Spec(project='project-b', reservation=RID))


def test_unhinted_request_never_on_a_reserved_host(make):
    f = make()
    assert not f.host_passes(Host(reservation()), Spec())
    # even the owner, and even while the host is still in the freepool too
    # (half-done start): the reservation wins
    assert not f.host_passes(Host(freepool(), reservation()), Spec())
    assert not f.host_passes(Host(reservation(), Aggregate('az1')), Spec())


def test_host_in_two_aggregates_serves_its_reservation(make):
    f = make()
    host = Host(freepool(), reservation())
    assert f.host_passes(host, Spec(reservation=RID))


def test_freepool_accepts_unreserved_by_option(make):
    assert make().host_passes(Host(freepool()), Spec())
    closed = make(freepool_accepts_unreserved=False)
    assert not closed.host_passes(Host(freepool()), Spec())
    # recognised by name too, when the metadata is missing
    assert not closed.host_passes(Host(freepool(marked=False)), Spec())
    other_name = make(freepool_accepts_unreserved=False,
                      aggregate_freepool_name='spare')
    assert not other_name.host_passes(Host(freepool('spare', False)), Spec())
    assert other_name.host_passes(Host(freepool('freepool', False)), Spec())
    # hosts Climate does not manage are none of its business
    assert closed.host_passes(Host(), Spec())
    assert closed.host_passes(Host(Aggregate('az1')), Spec())


def test_hint_forms(make):
    f = make()
    host = Host(reservation())
    # an empty hint is no hint
    assert not f.host_passes(host, Spec(raw_hints={'reservation': ['']}))
    assert f.host_passes(Host(), Spec(raw_hints={'reservation': ['']}))
    # two hints name no single reservation
    assert not f.host_passes(host, Spec(raw_hints={'reservation': [RID,
                                                                   OTHER]}))

    class OldSpec:  # no get_scheduler_hint
        project_id = OWNER
        scheduler_hints = {'reservation': [RID]}
    assert f.host_passes(host, OldSpec())


def test_aggregates_without_metadata_or_host_without_aggregates(make):
    f = make()
    agg = Aggregate('x')
    agg.metadata = None
    assert f.host_passes(Host(agg), Spec())

    class Bare:
        pass
    assert f.host_passes(Bare(), Spec())
    assert not f.host_passes(Bare(), Spec(reservation=RID))


def test_filter_runs_once_per_request(climate_filter):
    assert climate_filter.ClimateFilter.run_filter_once_per_request is True


# -- instance reservations: the flavor names the reservation -----------------

def test_flavored_request_lands_only_on_its_reservation(make):
    f = make()
    assert f.host_passes(Host(reservation()), Spec(flavor=RID))
    # the host stays in the freepool during an instance reservation
    assert f.host_passes(Host(freepool(), reservation()), Spec(flavor=RID))
    assert not f.host_passes(Host(reservation(OTHER)), Spec(flavor=RID))
    assert not f.host_passes(Host(freepool()), Spec(flavor=RID))
    assert not f.host_passes(Host(), Spec(flavor=RID))
    assert not f.host_passes(Host(Aggregate('az1')), Spec(flavor=RID))


def test_flavored_request_of_another_project_goes_nowhere(make):
    # an admin sees every private flavor; the owner check stops it
    f = make()
    assert not f.host_passes(Host(reservation()),
                             Spec(project='project-b', flavor=RID))
    assert not f.host_passes(Host(freepool(), reservation()),
                             Spec(project='project-b', flavor=RID))


def test_host_shared_by_several_instance_reservations(make):
    f = make()
    host = Host(freepool(), reservation(RID),
                reservation(OTHER, owner='project-b'))
    assert f.host_passes(host, Spec(flavor=RID))
    assert f.host_passes(host, Spec(project='project-b', flavor=OTHER))
    # each project only with its own reservation
    assert not f.host_passes(host, Spec(project='project-b', flavor=RID))
    assert not f.host_passes(host, Spec(flavor=OTHER))
    # and nothing unreserved
    assert not f.host_passes(host, Spec())
    assert not f.host_passes(host, Spec(project='project-b'))


def test_hint_and_flavor_must_agree(make):
    f = make()
    host = Host(reservation(RID), reservation(OTHER))
    assert f.host_passes(host, Spec(reservation=RID, flavor=RID))
    assert not f.host_passes(host, Spec(reservation=OTHER, flavor=RID))
    assert not f.host_passes(Host(reservation(OTHER)),
                             Spec(reservation=OTHER, flavor=RID))


def test_ordinary_flavors_keep_todays_rules(make):
    f = make()
    plain = Spec()
    plain.flavor = Flavor(**{'hw:cpu_policy': 'shared',
                             'aggregate_instance_extra_specs:ssd': 'true'})
    assert f.host_passes(Host(freepool()), plain)
    assert not f.host_passes(Host(reservation()), plain)
    empty = Spec(flavor='')
    assert f.host_passes(Host(), empty)
    assert not f.host_passes(Host(reservation()), empty)

    class NoFlavor:  # a request spec without a flavor
        project_id = OWNER
        scheduler_hints = {}
    assert f.host_passes(Host(), NoFlavor())
    assert not f.host_passes(Host(reservation()), NoFlavor())

    class Unloaded:  # a Nova object whose field was never loaded
        @property
        def extra_specs(self):
            raise NotImplementedError('Cannot load extra_specs')
    lazy = Spec()
    lazy.flavor = Unloaded()
    assert f.host_passes(Host(), lazy)


def test_pre_created_server_lands_on_its_reserved_host(make):
    f = make()
    held = Aggregate(RID, **{'climate:reservation': RID,
                             'climate:owner': OWNER,
                             'climate:server': 'server-1'})
    # the server being unshelved onto the host its lease reserved
    assert f.host_passes(Host(held), Spec(instance='server-1'))
    # beside an instance reservation of another project on the same host
    assert f.host_passes(Host(reservation(OTHER, 'project-b'), held),
                         Spec(instance='server-1'))
    # another server, or the same uuid in another project: refused
    assert not f.host_passes(Host(held), Spec(instance='server-2'))
    assert not f.host_passes(Host(held), Spec(instance='server-1',
                                              project='project-b'))
    assert not f.host_passes(Host(held), Spec())
