"""Network segments and reservations (``network``) from the command
line, against a running climate-all (static inventory): ``climate
network-create/-list/-show/-set/-delete`` and ``climate lease-create
--reservation resource_type=network,...``.

Segments are shared by the whole server: the test uses a physical
network of its own.
"""

import json
import uuid

from climate.tests.cli.test_floatingips import _later
from climate.tests.cli.test_floatingips import _ok


def test_network_commands_and_a_network_lease(cli):
    physnet = 'phys-%s' % uuid.uuid4().hex[:8]
    made = json.loads(_ok(cli(
        'network-create', '--network-type', 'vlan', '--physical-network',
        physnet, '--segment', '1001', '--extra', 'site=uc', '-f',
        'json')).out)
    assert (made['network_type'], made['physical_network'],
            made['segment_id'], made['site']) == ('vlan', physnet, 1001,
                                                  'uc')
    name = 'vlan:%s:1001' % physnet
    for ref in (made['id'], name):
        shown = json.loads(_ok(cli('network-show', ref, '-f', 'json')).out)
        assert shown['id'] == made['id']
    listed = json.loads(_ok(cli('network-list', '-f', 'json')).out)
    assert made['id'] in [n['id'] for n in listed]
    assert 'site' not in listed[0]
    # --long: every field, the extra capabilities too
    long = {n['id']: n for n in json.loads(_ok(cli(
        'network-list', '--long', '-f', 'json')).out)}
    assert long[made['id']]['site'] == 'uc'
    assert set(listed[0]) < set(long[made['id']])
    changed = json.loads(_ok(cli('network-set', name, '--extra', 'rack=r1',
                                 '--unset', 'site', '-f', 'json')).out)
    assert changed['rack'] == 'r1' and 'site' not in changed

    done = _ok(cli('lease-create', 'net-%s' % physnet, '--reservation',
                   'resource_type=network,network_name=my-net,'
                   'resource_properties=["==", "$physical_network", "%s"]'
                   % physnet, '--start-date', _later(hours=50),
                   '--end-date', _later(hours=52), '-f', 'json'))
    res = json.loads(done.out)['reservations'][0]
    assert (res['resource_type'], res['network_name']) == ('network',
                                                           'my-net')
    shown = json.loads(_ok(cli('lease-show', 'net-%s' % physnet, '-f',
                               'json')).out)
    assert shown['reservations'][0]['segment_id'] == 1001
    refused = cli('network-delete', name)
    assert refused.code != 0 and "Can't delete network" in refused.err
    _ok(cli('lease-delete', 'net-%s' % physnet))
    _ok(cli('network-delete', name))
    assert cli('network-show', name).code != 0
