"""Volume pools and volume reservations (``virtual:volume``) from the
command line, against a running climate-all (static inventory):
``climate volume-pool-create/-list/-show/-set/-delete`` and ``climate
lease-create --reservation resource_type=virtual:volume,size_gb=...``.

Pools are shared by the whole server: each test names its pools and tags
them ``suite=<uuid>``, and reserves through that tag.
"""

import datetime
import json
import uuid

ISO = '%Y-%m-%dT%H:%M:%S'


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def test_volume_pool_commands_and_a_volume_lease(cli):
    tag = uuid.uuid4().hex[:8]
    name = 'node@lvm#%s' % tag
    done = cli('volume-pool-create', name, '--total-capacity-gb', '100',
               '--reserved-percentage', '10', '--capability',
               'suite=%s' % tag, '--capability', 'volume_types=["fast"]',
               '-f', 'json')
    assert done.code == 0, done
    pool = json.loads(done.out)
    assert (pool['name'], pool['backend'], pool['capacity_gb']) == (
        name, 'lvm', 90)
    assert json.loads(pool['capabilities']) == {
        'suite': tag, 'volume_types': ['fast']}

    done = cli('volume-pool-list', '-f', 'json')
    assert done.code == 0, done
    assert name in [p['name'] for p in json.loads(done.out)]

    done = cli('volume-pool-set', name, '--total-capacity-gb', '50',
               '--not-reservable', '-f', 'json')
    assert done.code == 0, done
    shown = json.loads(cli('volume-pool-show', name, '-f', 'json').out)
    assert (shown['capacity_gb'], shown['reservable']) == (45, False)
    done = cli('volume-pool-set', name, '--reservable', '-f', 'json')
    assert done.code == 0, done

    where = 'resource_properties=["=", "$suite", "%s"]' % tag
    done = cli('lease-create', 'vol-%s' % tag, '--reservation',
               'resource_type=virtual:volume,size_gb=40,count=2,'
               'volume_type=fast,%s' % where,
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52), '-f', 'json')
    assert done.code == 0, done
    res = json.loads(done.out)['reservations'][0]
    assert (res['resource_type'], res['size_gb'], res['count'],
            res['on_end']) == ('virtual:volume', 40, 2, 'delete')

    # 40 of 45 GB are booked: 10 more do not fit
    done = cli('lease-create', 'more-%s' % tag, '--reservation',
               'resource_type=virtual:volume,size_gb=10,%s' % where,
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52), '-f', 'json')
    assert done.code != 0
    assert 'at most 5 GB free on one of the 1 reservable pool(s)' in \
        done.err, done

    # a booked pool cannot leave
    done = cli('volume-pool-delete', name)
    assert done.code != 0
    assert 'booked' in done.err, done

    done = cli('lease-delete', 'vol-%s' % tag)
    assert done.code == 0, done
    done = cli('volume-pool-delete', name)
    assert done.code == 0, done
    assert 'Deleted volume pool %s' % name in done.out


def test_bad_volume_reservation_names_the_field(cli):
    done = cli('lease-create', 'bad-%s' % uuid.uuid4().hex[:8],
               '--reservation', 'resource_type=virtual:volume,size_gb=0',
               '--start-date', _later(hours=50), '--end-date',
               _later(hours=52))
    assert done.code != 0
    assert 'size_gb must be >= 1' in done.err, done
