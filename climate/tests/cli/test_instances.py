"""Instance reservations (``virtual:instance``) from the command line,
against a running climate-all (static inventory): ``climate lease-create
--reservation resource_type=virtual:instance,...`` and python-blazarclient's
``blazar lease-create --reservation ...`` (how Blazar users and Heat's
client reserve slots).

Hosts are shared by the whole server: each test registers hosts with
capacity tagged ``suite=<uuid>`` and reserves through that tag, so tests
never take each other's capacity.
"""

import datetime
import json
import uuid

ISO = '%Y-%m-%dT%H:%M:%S'


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def _blazar_date(**delta):
    return _later(**delta)[:16].replace('T', ' ')


def _hosts(climate_all, tag, count):
    api = climate_all.api()
    for i in range(count):
        api.request('POST', '/v1/os-hosts', expect=(201,), json={
            'name': '%s-h%d' % (tag, i), 'vcpus': 2, 'memory_mb': 2048,
            'local_gb': 20, 'suite': tag})


def _filter(tag):
    return '["=", "$suite", "%s"]' % tag


def test_climate_lease_create_reserves_slots(climate_all, cli):
    tag = uuid.uuid4().hex[:8]
    _hosts(climate_all, tag, 2)
    done = cli('lease-create', 'slots-%s' % tag, '--reservation',
               'resource_type=virtual:instance,amount=2,vcpus=1,'
               'memory_mb=512,disk_gb=1,affinity=False,'
               'resource_properties=%s' % _filter(tag),
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52), '-f', 'json')
    assert done.code == 0, done
    lease = json.loads(done.out)
    res = lease['reservations'][0]
    assert res['resource_type'] == 'virtual:instance'
    assert (res['amount'], res['vcpus'], res['memory_mb'],
            res['disk_gb'], res['affinity']) == (2, 1, 512, 1, False)
    assert res['flavor_id'] == res['id']

    # two more 1-VCPU slots fit on distinct hosts; a third does not
    done = cli('lease-create', 'more-%s' % tag, '--reservation',
               'resource_type=virtual:instance,amount=3,vcpus=1,'
               'memory_mb=512,disk_gb=1,affinity=False,'
               'resource_properties=%s' % _filter(tag),
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52), '-f', 'json')
    assert done.code != 0
    assert 'Not enough hosts available: 2 instance(s)' in done.err, done

    done = cli('lease-delete', 'slots-%s' % tag)
    assert done.code == 0, done


def test_blazar_lease_create_reserves_slots(climate_all, cli):
    tag = uuid.uuid4().hex[:8]
    _hosts(climate_all, tag, 2)
    name = 'bz-slots-%s' % tag
    done = climate_all.run(
        'lease-create', '--reservation',
        'resource_type=virtual:instance,amount=2,vcpus=1,memory_mb=512,'
        'disk_gb=1,affinity=False,resource_properties=%s' % _filter(tag),
        '--start-date', _blazar_date(hours=60), '--end-date',
        _blazar_date(hours=61), name, script='blazar')
    assert done.code == 0, done
    lease = json.loads(cli('lease-show', name, '-f', 'json').out)
    res = lease['reservations'][0]
    assert res['resource_type'] == 'virtual:instance'
    assert (res['amount'], res['vcpus'], res['affinity']) == (2, 1, False)
    assert res['flavor_id'] == res['id']

    # blazarclient's defaults: affinity "None", resource_properties ""
    other = 'bz-any-%s' % tag
    done = climate_all.run(
        'lease-create', '--reservation',
        'resource_type=virtual:instance,amount=1,vcpus=1,memory_mb=512,'
        'disk_gb=1', '--start-date', _blazar_date(hours=70),
        '--end-date', _blazar_date(hours=71), other, script='blazar')
    assert done.code == 0, done
    res = json.loads(cli('lease-show', other, '-f', 'json').out)[
        'reservations'][0]
    assert res['affinity'] is None and res['resource_properties'] == ''

    # Blazar's sentence reaches its user
    done = climate_all.run(
        'lease-create', '--reservation',
        'resource_type=virtual:instance,amount=0,vcpus=1,memory_mb=512,'
        'disk_gb=1', '--start-date', _blazar_date(hours=60),
        '--end-date', _blazar_date(hours=61), 'bz-bad-%s' % tag,
        script='blazar')
    assert done.code != 0
    assert 'amount must be >= 1' in done.err + done.out, done

    for ref in (name, other):
        done = climate_all.run('lease-delete', ref, script='blazar')
        assert done.code == 0, done


def test_instance_availability(climate_all, cli):
    tag = uuid.uuid4().hex[:8]
    _hosts(climate_all, tag, 2)
    start = (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(days=3)).replace(
            hour=0, minute=0, second=0, microsecond=0)

    def at(hours):
        return (start + datetime.timedelta(hours=hours)).strftime(ISO)

    # two 2-VCPU slots take both hosts for the first three hours
    done = cli('lease-create', 'av-%s' % tag, '--reservation',
               'resource_type=virtual:instance,amount=2,vcpus=2,'
               'memory_mb=512,disk_gb=1,resource_properties=%s' %
               _filter(tag), '--start-date', at(0), '--end-date', at(3),
               '-f', 'json')
    assert done.code == 0, done

    done = cli('instance-availability', '--amount', '2', '--vcpus', '1',
               '--memory-mb', '512', '--disk-gb', '1', '--affinity',
               'false', '--duration', '1h', '--earliest-start', at(0),
               '--resource-properties', _filter(tag), '--limit', '2',
               '-f', 'json', project='av-%s' % tag)
    assert done.code == 0, done
    assert json.loads(done.out) == [
        {'start': at(3).replace('T', ' '), 'end': at(4).replace('T', ' '),
         'slots_free': 2},
        {'start': at(4).replace('T', ' '), 'end': at(5).replace('T', ' '),
         'slots_free': 2}]

    done = cli('instance-availability', '--vcpus', '1', '--memory-mb',
               '512', '--disk-gb', '1', '--start-date', at(1),
               '--end-date', at(2), '--resource-properties', _filter(tag),
               '-f', 'value')
    assert done.code == 0, done
    assert done.err == ('From %s to %s: 0 slot(s) free, not enough for '
                        '1.\n' % (at(1).replace('T', ' '),
                                  at(2).replace('T', ' ')))
    assert done.out.splitlines()[0] == '%s %s 4' % (
        at(3).replace('T', ' '), at(4).replace('T', ' '))

    # the server's sentence reaches the user
    done = cli('instance-availability', '--vcpus', '1', '--flavor-id',
               'x', '--duration', '1h')
    assert done.code == 1
    assert 'Give either flavor_id or vcpus, memory_mb and disk_gb' in \
        done.err, done
    done = cli('instance-availability', '--vcpus', '1', '--duration', '1h',
               '--start-date', 'now', '--end-date', at(1))
    assert done.code == 1
    assert done.err.startswith('give either --start-date and --end-date'), \
        done

    done = cli('lease-delete', 'av-%s' % tag)
    assert done.code == 0, done


def test_a_pre_created_reservation_goes_out_at_1_4(climate_all, cli):
    """A JSON --reservation with server fields is sent at microversion
    1.4; climate-all's static inventory cannot read servers and says so
    (at 1.3 the answer would name the microversion instead)."""
    done = cli('lease-create', 'pre-%s' % uuid.uuid4().hex[:8],
               '--reservation', json.dumps({
                   'resource_type': 'virtual:instance',
                   'server': {'name': 'vm', 'imageRef': 'img',
                              'flavorRef': 'm1.small'}}),
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52))
    assert done.code != 0, done
    assert 'Malformed parameter server. Pre-created instances (server_id, ' \
        'server) need the nova inventory' in done.err, done
