"""Floating IP addresses and reservations (``virtual:floatingip``) from
the command line, against a running climate-all (static inventory):
``climate floatingip-create/-list/-show/-delete`` and ``climate
lease-create --reservation resource_type=virtual:floatingip,...``.

Addresses are shared by the whole server: each test uses a network of
its own.
"""

import datetime
import json
import uuid

ISO = '%Y-%m-%dT%H:%M:%S'


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def _ok(done):
    assert done.code == 0, done
    return done


def test_floatingip_commands_and_a_floatingip_lease(cli):
    net = 'net-%s' % uuid.uuid4().hex[:8]
    made = [json.loads(_ok(cli('floatingip-create', net, address, '-f',
                               'json')).out)
            for address in ('172.24.4.11', '172.24.4.10')]
    assert (made[0]['floating_network_id'], made[0]['floating_ip_address'],
            made[0]['reservable']) == (net, '172.24.4.11', True)

    listed = json.loads(_ok(cli('floatingip-list', '--network', net, '-f',
                                'json')).out)
    assert [f['floating_ip_address'] for f in listed] == [
        '172.24.4.10', '172.24.4.11']
    assert set(listed[0]) == {'id', 'floating_ip_address',
                              'floating_network_id', 'reservable'}
    # by id or by address
    for ref in (made[1]['id'], '172.24.4.10'):
        shown = json.loads(_ok(cli('floatingip-show', ref, '-f',
                                   'json')).out)
        assert shown['id'] == made[1]['id']
        assert shown['subnet_id'] is None

    done = _ok(cli('lease-create', 'fip-%s' % net, '--reservation',
                   'resource_type=virtual:floatingip,network_id=%s,amount=2,'
                   'required_floatingips=["172.24.4.11"]' % net,
                   '--start-date', _later(hours=50), '--end-date',
                   _later(hours=52), '-f', 'json'))
    res = json.loads(done.out)['reservations'][0]
    assert (res['resource_type'], res['amount'],
            res['required_floatingips']) == ('virtual:floatingip', 2,
                                             ['172.24.4.11'])
    shown = json.loads(_ok(cli('lease-show', 'fip-%s' % net, '-f',
                               'json')).out)
    assert shown['reservations'][0]['floatingips'] == [
        '172.24.4.10', '172.24.4.11']

    done = cli('lease-create', 'more-%s' % net, '--reservation',
               'resource_type=virtual:floatingip,network_id=%s,amount=1'
               % net, '--start-date', _later(hours=51), '--end-date',
               _later(hours=53))
    assert done.code != 0
    assert 'Not enough floating IPs available: 1 floating IP(s) asked' in \
        done.err, done

    # a booked address cannot leave
    done = cli('floatingip-delete', '172.24.4.10')
    assert done.code != 0
    assert "Can't delete floating IP %s." % made[1]['id'] in done.err, done

    _ok(cli('lease-delete', 'fip-%s' % net))
    done = _ok(cli('floatingip-delete', made[0]['id'], '172.24.4.10'))
    assert 'Deleted floating IP 172.24.4.11 (%s)' % made[0]['id'] in done.out
    assert 'Deleted floating IP 172.24.4.10' in done.out
    assert json.loads(_ok(cli('floatingip-list', '--network', net, '-f',
                              'json')).out) == []


def test_bad_floatingip_input_names_the_field(cli):
    done = cli('floatingip-create', 'net', '10.0.0.300')
    assert done.code != 0
    assert 'IP address 10.0.0.300 is invalid form.' in done.err, done
    done = cli('lease-create', 'bad-%s' % uuid.uuid4().hex[:8],
               '--reservation',
               'resource_type=virtual:floatingip,network_id=x,amount=0',
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52))
    assert done.code != 0
    assert 'Malformed parameter amount.' in done.err, done
    done = cli('floatingip-show', '192.0.2.77')
    assert done.code != 0
    assert "No floating IP with an id or address of '192.0.2.77'" in \
        done.err, done
