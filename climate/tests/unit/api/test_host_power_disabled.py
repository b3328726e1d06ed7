"""The power routes (and the energy report) of a cloud without the host plugin: 404 saying so.

A module of its own: an in-process environment cannot start beside
another one (they share the configuration and the in-process bus).
"""

import pytest

from climate.tests import fixtures

V = '1.12'


@pytest.mark.parametrize('path', ['/v1/os-hosts/power',
                                  '/v1/os-hosts/1/power',
                                  '/v1/usage/energy'])
def test_without_the_host_plugin_the_routes_say_so(path):
    with fixtures.ClimateEnvironment(overrides=[
            ('plugins', 'manager', ['noop'])]) as bare:
        resp = bare.request('GET', path, persona='admin', version=V)
    assert resp.status_int == 404, resp.text
    assert 'Host reservations are not enabled on this cloud ([manager] ' \
        'plugins lacks physical.host.plugin).' in \
        resp.json['error_message'], resp.text
