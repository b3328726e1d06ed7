"""The ``static`` power backend, the contract's idempotent steps and the
choice of backend by ``[power] backend``."""

import pytest
from oslo_config import cfg

from climate.conf import hosts as hosts_conf
from climate.conf import power_backends as power_conf
from climate import exceptions
from climate.plugins.physical_host import power
from climate.plugins.physical_host.power import base
from climate.plugins.physical_host.power import ironic
from climate.plugins.physical_host.power import nova_service
from climate.plugins.physical_host.power import static


def make_conf(inventory='static', **overrides):
    conf = cfg.ConfigOpts()
    power_conf.register_opts(conf)
    hosts_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('inventory', inventory, group='hosts')
    for key, value in overrides.items():
        conf.set_override(key, value, group='power')
    return conf


def host(name):
    return {'hypervisor_hostname': name, 'service_name': name}


def test_static_records_states_and_calls_nothing():
    backend = static.StaticPowerBackend(make_conf(), states={'h2': 'off'})
    assert backend.acts_in_cloud is False
    assert backend.state(host('h1')) == base.PowerState('on', None)
    assert backend.state(host('h2')) == base.PowerState('off', None)
    assert backend.power_off(host('h1')) == base.PowerState('off', None)
    assert backend.power_on(host('h2')) == base.PowerState('on', None)
    assert [(h, s) for _t, h, s in backend.history] == [
        ('h1', 'off'), ('h2', 'on')]


def test_repeated_actions_are_not_recorded_twice():
    backend = static.StaticPowerBackend(make_conf())
    backend.power_on(host('h1'))  # on already
    backend.power_off(host('h1'))
    backend.power_off(host('h1'))
    assert [(h, s) for _t, h, s in backend.history] == [('h1', 'off')]
    assert backend.power_watts(host('h1')) is None


class Scripted(base.PowerBackend):
    """A switch that answers the states it is given, one per read."""

    name = 'scripted'
    service = 'Scripted'
    poll_interval = 0.01

    def __init__(self, conf, states):
        super().__init__(conf)
        self.states = list(states)
        self.asked = []

    def state(self, host):
        if len(self.states) > 1:
            return self.states.pop(0)
        return self.states[0]

    def request(self, host, wanted, current):
        self.asked.append(wanted)


def test_a_host_heading_for_the_state_is_not_asked_again():
    heading = base.PowerState('on', 'off')
    backend = Scripted(make_conf(action_timeout=5),
                       [heading, heading, base.PowerState('off', None)])
    assert backend.power_off(host('h1')) == base.PowerState('off', None)
    assert backend.asked == []


def test_a_host_heading_elsewhere_is_asked_and_waited_for():
    backend = Scripted(make_conf(action_timeout=5),
                       [base.PowerState('on', 'off'),
                        base.PowerState('off', None),
                        base.PowerState('on', None)])
    assert backend.power_on(host('h1')) == base.PowerState('on', None)
    assert backend.asked == ['on']


def test_no_wait_with_a_zero_timeout_and_a_timeout_otherwise():
    still = base.PowerState('on', None)
    backend = Scripted(make_conf(action_timeout=0), [still])
    assert backend.power_off(host('h1')) == still
    assert backend.asked == ['off']
    backend = Scripted(make_conf(action_timeout=1), [still])
    with pytest.raises(base.TransitionTimeout) as caught:
        backend.power_off(host('h1'))
    assert isinstance(caught.value, exceptions.CloudUnavailable)
    assert 'h1 is still on' in str(caught.value)


def test_unknown_is_neither_on_nor_off():
    unknown = base.PowerState('unknown', None)
    assert not unknown.reached('on') and not unknown.reached('off')
    assert base.PowerState('off', 'on').transitioning


def test_the_loader_picks_the_backend_and_guards_nova_only():
    assert isinstance(power.load(make_conf()), static.StaticPowerBackend)
    # static on Nova's inventory calls nothing, Nova included
    assert isinstance(power.load(make_conf('nova')),
                      static.StaticPowerBackend)
    plain = power.load(make_conf(backend='ironic'))
    assert isinstance(plain, ironic.IronicPowerBackend)
    guarded = power.load(make_conf('nova', backend='ironic'))
    assert isinstance(guarded, nova_service.NovaServiceGuard)
    assert isinstance(guarded.inner, ironic.IronicPowerBackend)
    assert guarded.name == 'ironic'
    unguarded = power.load(make_conf('nova', backend='ironic',
                                     manage_nova_service=False))
    assert isinstance(unguarded, ironic.IronicPowerBackend)


def test_redfish_without_sushy_is_backend_unavailable(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'sushy', None)  # import fails
    with pytest.raises(power.BackendUnavailable) as caught:
        power.load(make_conf(backend='redfish'))
    assert 'climate[power]' in str(caught.value)
