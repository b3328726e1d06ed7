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
