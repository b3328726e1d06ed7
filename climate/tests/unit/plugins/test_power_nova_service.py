"""The nova-compute step of the power backends against the in-memory Nova
of the nova inventory's tests.

``FakeNova`` (``test_nova_backend``) holds the compute services' state
(``{host: (state, status, disabled reason)}``) and the servers per host;
:class:`FakeServices` adds the os-services calls of microversion 2.53 and
later (``list(host, binary)``, ``disable_log_reason(id, reason)``,
``enable(id)``) on that state, recording each.  The switch under the step
is the static backend, which records what it is asked.
"""

import datetime
import types

import pytest
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg

from climate.conf import clients as clients_conf
from climate.conf import hosts as hosts_conf
from climate.conf import power_backends as power_conf
from climate import exceptions
from climate.plugins.physical_host.backends import nova as nova_backend
from climate.plugins.physical_host.power import base
from climate.plugins.physical_host.power import nova_service
from climate.plugins.physical_host.power import static
from climate.tests.unit.plugins.test_nova_backend import FakeNova

UNTIL = datetime.datetime(2026, 12, 3, 8, 0, tzinfo=datetime.timezone.utc)
REASON = 'climate: powered off until 2026-12-03T08:00:00Z'


class FakeServices:
    def __init__(self, nova):
        self.nova = nova
        self.fail = None

    def _view(self, host):
        state, status, *reason = self.nova.state[host]
        return types.SimpleNamespace(
            id='svc-%s' % host, host=host, binary='nova-compute',
            state=state, status=status,
            disabled_reason=reason[0] if reason else None)

    def list(self, host=None, binary=None):
        self.nova.calls.append(('services.list', host))
        if self.fail is not None:
            raise self.fail
        return [self._view(h) for h in sorted(self.nova.state)
                if host in (None, h)]

    def _host_of(self, service_id):
        return service_id[len('svc-'):]

    def disable_log_reason(self, service_id, reason):
        host = self._host_of(service_id)
        self.nova.calls.append(('disable', host, reason))
        self.nova.state[host] = (self.nova.state[host][0], 'disabled',
                                 reason)
        return self._view(host)

    def enable(self, service_id):
        host = self._host_of(service_id)
        self.nova.calls.append(('enable', host))
        self.nova.state[host] = (self.nova.state[host][0], 'enabled')
        return self._view(host)


@pytest.fixture
def nova():
    fake = FakeNova(['c1', 'c2'])
    fake.services = FakeServices(fake)
    fake.state = {'c1': ('up', 'enabled'), 'c2': ('up', 'enabled')}
    return fake


def make_conf(**overrides):
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    hosts_conf.register_opts(conf)
    power_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('inventory', 'nova', group='hosts')
    for key, value in overrides.items():
        conf.set_override(key, value, group='power')
    return conf


@pytest.fixture
def make(nova):
    def make_guard(inner=None, **overrides):
        conf = make_conf(**overrides)
        inner = inner or static.StaticPowerBackend(conf)
        return nova_service.NovaServiceGuard(conf, inner, nova=nova)
    return make_guard


def host(name, service=None):
    # an ironic-driven compute service holds hypervisors of other names
    return {'hypervisor_hostname': name, 'service_name': service or name}


def changes(nova):
    return [c for c in nova.calls if c[0] in ('disable', 'enable')]


def switched(guard):
    return [(h, s) for _t, h, s in guard.inner.history]


def test_power_off_closes_the_service_first_with_climates_reason(nova,
                                                                 make):
    guard = make()
    assert guard.power_off(host('c1'), until=UNTIL) == \
        base.PowerState('off', None)
    assert changes(nova) == [('disable', 'c1', REASON)]
    assert nova.state['c1'] == ('up', 'disabled', REASON)
    assert switched(guard) == [('c1', 'off')]
    assert nova_service.closed_by_power(
        nova.services.list(host='c1')[0])


def test_a_repeated_power_off_changes_nothing(nova, make):
    guard = make()
    guard.power_off(host('c1'), until=UNTIL)
    guard.power_off(host('c1'), until=UNTIL)
    assert changes(nova) == [('disable', 'c1', REASON)]
    assert switched(guard) == [('c1', 'off')]


def test_power_on_opens_the_service_it_closed(nova, make):
    guard = make()
    guard.power_off(host('c1'), until=UNTIL)
    assert guard.power_on(host('c1')) == base.PowerState('on', None)
    assert nova.state['c1'] == ('up', 'enabled')
    guard.power_on(host('c1'))
    assert changes(nova) == [('disable', 'c1', REASON), ('enable', 'c1')]
    assert switched(guard) == [('c1', 'off'), ('c1', 'on')]


def test_an_operators_disable_is_never_undone(nova, make):
    nova.state['c1'] = ('up', 'disabled', 'operator: new disks')
    guard = make()
    guard.power_off(host('c1'), until=UNTIL)
    guard.power_on(host('c1'))
    assert changes(nova) == []
    assert nova.state['c1'] == ('up', 'disabled', 'operator: new disks')
    assert switched(guard) == [('c1', 'off'), ('c1', 'on')]


def test_a_hunts_disable_is_not_taken_for_a_power_off(nova, make):
    hunt = nova_backend.HUNT_DISABLED_REASON % 'lease-1'
    nova.state['c1'] = ('up', 'disabled', hunt)
    guard = make()
    guard.power_off(host('c1'))
    guard.power_on(host('c1'))
    assert changes(nova) == []
    assert nova.state['c1'] == ('up', 'disabled', hunt)


def test_a_host_running_servers_is_not_powered_off(nova, make):
    nova.servers.on['c1'] = ['srv-1', 'srv-2']
    guard = make()
    with pytest.raises(base.HostBusy) as caught:
        guard.power_off(host('c1'), until=UNTIL)
    assert isinstance(caught.value, exceptions.CloudUnavailable)
    assert 'srv-1, srv-2 run on c1' in str(caught.value)
    # closed while looking (no server lands meanwhile), opened again
    assert changes(nova) == [('disable', 'c1', REASON), ('enable', 'c1')]
    assert nova.state['c1'] == ('up', 'enabled')
    assert switched(guard) == []


def test_servers_on_an_operator_disabled_host_leave_it_disabled(nova,
                                                                make):
    nova.state['c1'] = ('up', 'disabled', 'operator: new disks')
    nova.servers.on['c1'] = ['srv-1']
    with pytest.raises(base.HostBusy):
        make().power_off(host('c1'))
    assert changes(nova) == []


def test_the_service_host_name_is_the_compute_services(nova, make):
    guard = make()
    guard.power_off(host('node-uuid-1', service='c2'), until='later')
    assert changes(nova) == [
        ('disable', 'c2', 'climate: powered off until later')]
    assert ('services.list', 'c2') in nova.calls


class StillPoweringOn(base.PowerBackend):
    name = 'slow'

    def state(self, host):
        return base.PowerState('off', 'on')

    def request(self, host, wanted, current):
        raise AssertionError('a host powering on is not asked again')


def test_a_host_still_powering_on_keeps_its_service_closed(nova, make):
    nova.state['c1'] = ('down', 'disabled', REASON)
    guard = make(inner=StillPoweringOn(make_conf(action_timeout=0)))
    assert guard.power_on(host('c1')) == base.PowerState('off', 'on')
    assert changes(nova) == []


def test_a_nova_outage_stops_the_power_off(nova, make):
    nova.services.fail = ks_exc.ConnectFailure('nova is gone')
    guard = make()
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        guard.power_off(host('c1'))
    assert 'Nova' in str(caught.value)
    assert switched(guard) == []


def test_a_host_nova_does_not_know_is_still_powered(nova, make):
    guard = make()
    guard.power_off(host('c9'))
    assert changes(nova) == []
    assert switched(guard) == [('c9', 'off')]


def test_power_on_of_a_host_on_reopens_a_service_left_closed(nova, make):
    # a power off refused for servers whose reopening failed
    nova.state['c1'] = ('up', 'disabled', REASON)
    guard = make()
    assert guard.power_on(host('c1')) == base.PowerState('on', None)
    assert changes(nova) == [('enable', 'c1')]
    assert switched(guard) == []
