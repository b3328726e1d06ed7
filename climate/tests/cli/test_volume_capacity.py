"""Volume capacity from the command line, against a running climate-all
(static inventory, microversion 1.6): ``climate volume-availability``
(any project) and ``climate volume-pool-calendar`` (admins).

Pools are shared by the whole server: each test names its pools and tags
them ``suite=<uuid>``, and reserves and searches through that tag.
"""

import datetime
import json
import uuid

ISO = '%Y-%m-%dT%H:%M:%S'


def _day_after_tomorrow():
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return (now + datetime.timedelta(days=2)).replace(
        hour=0, minute=0, second=0, microsecond=0)


def _pools(cli, tag):
    """Two pools tagged ``tag``: ``<tag>-big`` (100 GB) and ``<tag>-small``
    (50 GB)."""
    names = []
    for name, size in (('%s-big' % tag, 100), ('%s-small' % tag, 50)):
        done = cli('volume-pool-create', name, '--total-capacity-gb', size,
                   '--capability', 'suite=%s' % tag)
        assert done.code == 0, done
        names.append(name)
    return names


def _where(tag):
    return '["=", "$suite", "%s"]' % tag


def test_volume_availability_and_the_pool_calendar(cli):
    tag = uuid.uuid4().hex[:8]
    big, small = _pools(cli, tag)
    start = _day_after_tomorrow()

    def at(hours):
        return (start + datetime.timedelta(hours=hours)).strftime(ISO)

    def lease(name, size_gb, start_hour, end_hour):
        done = cli('lease-create', name, '--reservation',
                   'resource_type=virtual:volume,size_gb=%d,'
                   'resource_properties=%s' % (size_gb, _where(tag)),
                   '--start-date', at(start_hour), '--end-date',
                   at(end_hour), '-f', 'json')
        assert done.code == 0, done
        return json.loads(done.out)

    # 90 GB fit only on the big pool; 40 GB then only on the small one
    first = lease('vol-a-%s' % tag, 90, 2, 8)
    second = lease('vol-b-%s' % tag, 40, 4, 10)

    # another project's member asks: 60 GB fit on one pool from 08:00
    done = cli('volume-availability', '--size-gb', '60', '--duration',
               '2h', '--earliest-start', at(2), '--resource-properties',
               _where(tag), '--limit', '2', '-f', 'json',
               project='project-%s' % tag)
    assert done.code == 0, done
    assert json.loads(done.out) == [
        {'start': at(8).replace('T', ' '), 'end': at(10).replace('T', ' '),
         'gb_free': 100},
        {'start': at(10).replace('T', ' '),
         'end': at(12).replace('T', ' '), 'gb_free': 100}]

    done = cli('volume-availability', '--size-gb', '20', '--start-date',
               at(4), '--end-date', at(6), '--resource-properties',
               _where(tag), '--limit', '1', '-f', 'value',
               project='project-%s' % tag)
    assert done.code == 0, done
    # 10 GB free on the big pool and 10 on the small one over 04:00-06:00
    assert done.err == ('From %s to %s: 10 GB free on one pool, not enough '
                        'for 20 GB.\n' % (at(4).replace('T', ' '),
                                          at(6).replace('T', ' ')))
    assert done.out.split() == [at(8)[:10], at(8)[11:], at(10)[:10],
                                at(10)[11:], '100']

    done = cli('volume-availability', '--size-gb', '0', '--duration', '1h',
               project='project-%s' % tag)
    assert done.code == 1
    assert 'size_gb' in done.err and '(HTTP 400)' in done.err, done

    # the calendar: admins only
    done = cli('volume-pool-calendar', '--start', at(0), '--end', at(24),
               '--pool', big, '--pool', small)
    assert done.code == 0, done
    lines = done.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].startswith('Volume pools x time (UTC), %s -> ' % (
        at(0).replace('T', ' ')[:16]))
    bars = [line[line.index('|') + 1:-1] for line in lines if '|' in line]
    # 30-minute columns: A 02:00-08:00 on big, B 04:00-10:00 on small
    assert bars == ['....' + 'A' * 12 + '.' * 32,
                    '.' * 8 + 'B' * 12 + '.' * 28]
    text = done.out.replace('\n   ', ' ')
    assert 'A  vol-a-%s (%s) %s -> %s, 90 GB' % (
        tag, first['id'], at(2).replace('T', ' ')[:16],
        at(8).replace('T', ' ')[:16]) in text
    assert 'B  vol-b-%s (%s)' % (tag, second['id']) in text
    assert ' '.join(done.out.split()).endswith(
        'Held at most: %s 90 of 100 GB; %s 40 of 50 GB' % (big, small))

    done = cli('volume-pool-calendar', project='project-%s' % tag)
    assert done.code == 1
    assert '(HTTP 403)' in done.err, done
    done = cli('volume-pool-calendar', '--pool', 'no-such-%s' % tag)
    assert done.code == 1
    assert "No volume pool with a name or id of 'no-such-%s'" % tag in \
        done.err, done

    for name in ('vol-a-%s' % tag, 'vol-b-%s' % tag):
        assert cli('lease-delete', name).code == 0
    assert cli('volume-pool-delete', big, small).code == 0
