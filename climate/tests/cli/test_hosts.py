"""Host commands, host-calendar and availability against a running
climate-all (static inventory), with ``climate``, ``blazar`` and
``openstack reservation``.

Hosts are shared by the whole server: each test tags its hosts with a
property of its own (``suite=<uuid>``) and reserves through it, so tests
never take each other's hosts.
"""

import datetime
import json
import os
import re
import struct
import uuid

REQUEST_ID = r'\(Request-ID: req-[0-9a-f-]{36}\)'
ISO = '%Y-%m-%dT%H:%M:%S'


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def _tag():
    return uuid.uuid4().hex[:8]


def _hosts(cli, tag, count, **extra):
    names = ['%s-h%d' % (tag, i) for i in range(count)]
    for name in names:
        args = ['host-create', name, '--extra', 'suite=%s' % tag, '-f',
                'json']
        for key, value in extra.items():
            args += ['--extra', '%s=%s' % (key, value)]
        done = cli(*args)
        assert done.code == 0, done
    return names


def _host_lease(cli, tag, name, count, start, end):
    done = cli('lease-create', name, '--reservation',
               'resource_type=physical:host,min=%d,max=%d,'
               'resource_properties=["=", "$suite", "%s"]' % (
                   count, count, tag),
               '--start-date', start, '--end-date', end, '-f', 'json')
    assert done.code == 0, done
    return json.loads(done.out)


def test_host_lifecycle_subprocess(climate_all):
    tag = _tag()
    made = climate_all.run('host-create', '%s-a' % tag, '--extra',
                           'gpu=true', '--extra', 'suite=%s' % tag, '-f',
                           'json')
    assert made.code == 0, made
    host = json.loads(made.out)
    assert host['hypervisor_hostname'] == '%s-a' % tag
    assert host['gpu'] == 'true'

    listed = json.loads(climate_all.run('host-list', '-f', 'json').out)
    assert {'id': host['id'], 'hypervisor_hostname': '%s-a' % tag} in [
        {k: r[k] for k in ('id', 'hypervisor_hostname')} for r in listed]
    assert 'suite' not in listed[0]
    long = {r['id']: r for r in json.loads(climate_all.run(
        'host-list', '--long', '-f', 'json').out)}
    assert (long[host['id']]['gpu'], long[host['id']]['suite']) == (
        'true', tag)

    # the hostname where an id goes, and the id
    for ref in ('%s-a' % tag, host['id']):
        shown = climate_all.run('host-show', ref, '-f', 'value', '-c', 'gpu')
        assert (shown.code, shown.out) == (0, 'true\n'), shown

    updated = climate_all.run('host-update', '%s-a' % tag, '--extra',
                              'rack=r1', '--unset', 'gpu', '-f', 'json')
    assert updated.code == 0, updated
    after = json.loads(updated.out)
    assert after['rack'] == 'r1'
    assert 'gpu' not in after

    deleted = climate_all.run('host-delete', '%s-a' % tag)
    assert deleted.code == 0, deleted
    assert deleted.out == 'Deleted host %s-a (%s)\n' % (tag, host['id'])
    gone = climate_all.run('host-show', host['id'])
    assert (gone.code, gone.err) == (
        1, "No host with a name or id of '%s' exists.\n" % host['id'])


def test_host_errors(cli):
    tag = _tag()
    _hosts(cli, tag, 1)
    name = '%s-h0' % tag
    done = cli('host-create', name)
    assert done.code == 1
    assert re.fullmatch(r'Host %s is already in the inventory\. \(HTTP 409\) '
                        % name + REQUEST_ID + r'\n', done.err), done
    done = cli('host-create', 'x', '--extra', 'novalue')
    assert (done.code, done.err) == (1, "--extra 'novalue': expected "
                                        "key=value\n")
    done = cli('host-update', name)
    assert (done.code, done.err) == (1, 'Nothing to change: give --extra '
                                        'key=value or --unset key.\n')
    done = cli('host-update', name, '--extra', 'a=1', '--unset', 'a')
    assert (done.code, done.err) == (1, "property 'a' is both set (--extra) "
                                        "and unset (--unset)\n")
    done = cli('host-show', 'no-such-host')
    assert (done.code, done.err) == (
        1, "No host with a name or id of 'no-such-host' exists.\n")
    # hosts are for admins: a member sees the pool as one entry
    done = cli('host-list', project='not-an-admin')
    assert done.code == 0, done
    assert 'reservable-hosts' in done.out and name not in done.out, done
    done = cli('host-list', project='not-an-admin', roles='observer')
    assert done.code == 1
    assert re.fullmatch(r"Policy doesn't allow climate:oshosts:get_all to "
                        r"be performed\. \(HTTP 403\) " + REQUEST_ID + r'\n',
                        done.err), done


def test_allocations_properties_and_delete_refused(cli):
    tag = _tag()
    names = _hosts(cli, tag, 2, colour='blue')
    lease = _host_lease(cli, tag, 'alloc-%s' % tag, 2, _later(hours=1),
                        _later(hours=3))
    rows = json.loads(cli('host-allocation-list', '--lease',
                          'alloc-%s' % tag, '-f', 'json').out)
    assert sorted(r['hypervisor_hostname'] for r in rows) == names
    assert {r['lease_id'] for r in rows} == {lease['id']}
    one = json.loads(cli('host-allocation-list', '--host', names[0], '-f',
                         'json').out)
    assert [r['lease_id'] for r in one] == [lease['id']]

    done = cli('host-delete', names[0])
    assert done.code == 1
    assert re.search(r"Cannot delete host %s: Can't delete host \d+\. The "
                     r'host is reserved\. Host %s is allocated to '
                     r'reservations %s; it can leave the inventory once '
                     r'they are over\. \(HTTP 409\) ' % (
                         names[0], names[0],
                         lease['reservations'][0]['id']) + REQUEST_ID,
                     done.err), done

    props = json.loads(cli('host-property-list', '--detail', '-f',
                           'json').out)
    colour = next(p for p in props if p['property'] == 'colour')
    assert colour['private'] is False and 'blue' in colour['values']
    done = cli('host-property-set', 'colour', '--private', '-f', 'json')
    assert done.code == 0, done
    assert json.loads(done.out)['private'] is True
    public = [p['property'] for p in json.loads(cli(
        'host-property-list', '-f', 'json').out)]
    assert 'colour' not in public
    assert 'colour' in [p['property'] for p in json.loads(cli(
        'host-property-list', '--all', '-f', 'json').out)]
    cli('host-property-set', 'colour', '--public')


def test_host_calendar(cli):
    tag = _tag()
    names = _hosts(cli, tag, 3)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    start = (now + datetime.timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0)

    def at(hours):
        return (start + datetime.timedelta(hours=hours)).strftime(ISO)

    first = _host_lease(cli, tag, 'cal-a-%s' % tag, 2, at(2), at(8))
    second = _host_lease(cli, tag, 'cal-b-%s' % tag, 1, at(12), at(18))
    args = ['host-calendar', '--start', at(0), '--end', at(24)]
    for name in names:
        args += ['--host', name]
    done = cli(*args)
    assert done.code == 0, done
    lines = done.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == ('Hosts x time (UTC), %s -> %s, 1 column = 30m' % (
        start.strftime('%Y-%m-%d %H:%M'),
        (start + datetime.timedelta(days=1)).strftime('%Y-%m-%d %H:%M')))
    bars = {line.split(' ', 1)[0]: line[line.index('|') + 1:-1]
            for line in lines if '|' in line}
    assert set(bars) == set(names)
    # 30-minute columns: A holds 02:00-08:00 (columns 4-15) on two hosts,
    # B 12:00-18:00 (columns 24-35) on one, whichever the server chose
    a_only = '....' + 'A' * 12 + '.' * 32
    b_only = '.' * 24 + 'B' * 12 + '.' * 12
    a_and_b = '....' + 'A' * 12 + '.' * 8 + 'B' * 12 + '.' * 12
    assert sorted(bars.values()) in (sorted([a_and_b, a_only, '.' * 48]),
                                     sorted([a_only, a_only, b_only]))
    text = done.out.replace('\n   ', ' ')
    assert 'A  cal-a-%s (%s) %s -> %s' % (
        tag, first['id'], at(2).replace('T', ' ')[:16],
        at(8).replace('T', ' ')[:16]) in text
    assert 'B  cal-b-%s (%s)' % (tag, second['id']) in text
    assert 'Free: ' in done.out

    done = cli('host-calendar', '--start', 'yesterday')
    assert (done.code, done.err) == (1, (
        "Invalid --start 'yesterday': use 'YYYY-MM-DD HH:MM', 'now' or ISO "
        "8601 (e.g. 2030-01-31T12:00:00+01:00).\n"))
    done = cli('host-calendar', '--start', at(5), '--end', at(1))
    assert (done.code, done.err) == (1, '--end must be later than --start\n')

    timeline = cli('lease-show', 'cal-a-%s' % tag, '--timeline')
    assert timeline.code == 0, timeline
    rows = [line for line in timeline.out.splitlines() if '|' in line]
    assert len(rows) == 3  # the lease and its two hosts
    assert rows[0].startswith('lease ')


def test_availability_and_plot(cli, tmp_path):
    tag = _tag()
    _hosts(cli, tag, 2)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    start = (now + datetime.timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0)

    def at(hours):
        return (start + datetime.timedelta(hours=hours)).strftime(ISO)

    _host_lease(cli, tag, 'av-%s' % tag, 2, at(0), at(6))
    flt = '["=", "$suite", "%s"]' % tag
    done = cli('availability', '--count', '2', '--duration', '2h',
               '--earliest-start', at(0), '--resource-properties', flt,
               '--limit', '1', '-f', 'json')
    assert done.code == 0, done
    windows = json.loads(done.out)
    assert [(w['start'], w['hosts_free']) for w in windows] == [
        (at(6).replace('T', ' '), 2)]

    png = tmp_path / 'free.png'
    done = cli('availability', '--count', '1', '--duration', '2h',
               '--earliest-start', at(0), '--latest-end', at(12),
               '--resource-properties', flt, '--plot', str(png))
    assert done.code == 0, done
    assert done.err == 'Plot written to %s\n' % png
    data = png.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    width, height = struct.unpack('>II', data[16:24])
    assert (width, height) == (1000, 400)

    done = cli('availability', '--duration', '1x')
    assert (done.code, done.err) == (1, (
        "--duration must be a whole number followed by s, m, h, d or w "
        "(e.g. '2h'), not '1x'\n"))
    done = cli('availability', '--count', '0', '--duration', '1h')
    assert done.code == 1
    assert re.fullmatch(r'Invalid input: count must be a whole number from '
                        r'1 to \d+, not 0 \(HTTP 400\) ' + REQUEST_ID +
                        r'\n', done.err), done


def test_blazar_and_openstack_host_commands(climate_all, cli):
    tag = _tag()
    name = '%s-bz' % tag

    def blazar(*args):
        done = climate_all.run(*args, script='blazar')
        assert done.code == 0, done
        return done

    def openstack(*args):
        done = climate_all.run('reservation', *args, script='openstack')
        assert done.code == 0, done
        return done

    blazar('host-create', name, '--extra', 'suite=%s' % tag)
    mine = json.loads(cli('host-show', name, '-f', 'json').out)
    theirs = json.loads(blazar('host-show', name, '-f', 'json').out)
    for key in ('id', 'hypervisor_hostname', 'vcpus', 'suite'):
        assert theirs[key] == mine[key]
    listed = json.loads(blazar('host-list', '-f', 'json').out)
    ours = json.loads(cli('host-list', '-f', 'json').out)
    assert sorted(h['id'] for h in listed) == sorted(h['id'] for h in ours)
    osc = json.loads(openstack('host', 'list', '-f', 'json').out)
    assert sorted(h['id'] for h in osc) == sorted(h['id'] for h in ours)

    blazar('host-update', name, '--extra', 'rack=r9')
    assert json.loads(cli('host-show', name, '-f', 'json').out)[
        'rack'] == 'r9'
    openstack('host', 'set', '--extra', 'rack=r8', name)
    assert json.loads(cli('host-show', name, '-f', 'json').out)[
        'rack'] == 'r8'

    # Blazar's own way to reserve hosts
    blazar('lease-create', '--physical-reservation',
           'min=1,max=1,resource_properties=["=", "$suite", "%s"]' % tag,
           '--start-date', _later(hours=40)[:16].replace('T', ' '),
           '--end-date', _later(hours=41)[:16].replace('T', ' '),
           'bz-hosts-%s' % tag)
    lease = json.loads(cli('lease-show', 'bz-hosts-%s' % tag, '-f',
                           'json').out)
    assert lease['reservations'][0]['resource_type'] == 'physical:host'
    allocs = json.loads(blazar('allocation-list', 'host', '-f', 'json').out)
    mine = [a for a in allocs if str(a['resource_id']) == str(
        theirs['id'])]
    assert [r['lease_id'] for r in mine[0]['reservations']] == [lease['id']]

    blazar('lease-delete', 'bz-hosts-%s' % tag)
    blazar('host-delete', name)
    assert cli('host-show', name).code == 1


def _planned(climate_all, host_id, rows, watts=None):
    """What the power planner would have written for ``host_id``: its
    ``host_power`` row and history ``rows`` of (state, start, end);
    ``watts``: the idle draw it read at the start of the first row."""
    import sqlite3
    db = sqlite3.connect(os.path.join(climate_all.workdir, 'climate.sqlite'))
    try:
        state, since, _end = rows[-1]
        db.execute('INSERT INTO host_power (host_id, state, since, '
                   'boot_seconds, idle_watts, watts_at) VALUES '
                   '(?, ?, ?, 420, ?, ?)',
                   (host_id, state, since, watts,
                    rows[0][1] if watts is not None else None))
        db.executemany('INSERT INTO host_power_history (host_id, state, '
                       'started_at, ended_at) VALUES (?, ?, ?, ?)',
                       [(host_id,) + row for row in rows])
        db.commit()
    finally:
        db.close()


def test_host_power_list_and_show(cli, climate_all):
    tag = _tag()
    name, = _hosts(cli, tag, 1)
    host = json.loads(cli('host-show', name, '-f', 'json').out)
    listed = {r['hypervisor_hostname']: r for r in json.loads(
        cli('host-power-list', '-f', 'json').out)}
    # the planner is off in the embedded default: never looked at
    assert listed[name]['state'] == 'unknown'
    assert listed[name]['since'] is None
    _planned(climate_all, host['id'], [
        ('on', '2020-01-10 00:00:00.000000', '2020-01-10 06:00:00.000000'),
        ('off', '2020-01-10 06:00:00.000000', '2020-01-10 09:00:00.000000'),
        ('on', '2020-01-10 09:00:00.000000', None)])
    listed = {r['hypervisor_hostname']: r for r in json.loads(
        cli('host-power-list', '-f', 'json').out)}
    assert (listed[name]['state'], listed[name]['since'],
            listed[name]['boot_seconds']) == ('on', '2020-01-10 09:00:00',
                                              420)
    done = cli('host-power-show', name, '--start', '2020-01-10 04:00',
               '--end', '2020-01-10 08:00', '-f', 'json')
    assert done.code == 0, done
    power = json.loads(done.out)
    assert (power['start'], power['end']) == ('2020-01-10 04:00:00',
                                              '2020-01-10 08:00:00')
    assert power['hours_off'] == 2.0
    assert power['kwh_saved'] == round(2.0 * power['idle_watts'] / 1000, 3)
    assert power['history'].splitlines() == [
        'on      2020-01-10 04:00:00 .. 06:00:00',
        'off     2020-01-10 06:00:00 .. 08:00:00']
    done = cli('host-power-show', name, '--start', '2020-01-10 04:00',
               '--end', '2020-01-10 01:00')
    assert done.code == 1
    assert 'end (2020-01-10T01:00:00' in done.err, done


def test_usage_energy_by_step_by_host_and_as_a_chart(cli, climate_all,
                                                     tmp_path):
    tag = _tag()
    first, second = _hosts(cli, tag, 2)
    ids = [json.loads(cli('host-show', name, '-f', 'json').out)['id']
           for name in (first, second)]
    # a day of 2019 no other test writes power history for
    _planned(climate_all, ids[0], [
        ('off', '2019-06-01 02:00:00.000000', '2019-06-01 08:00:00.000000'),
        ('on', '2019-06-01 08:00:00.000000', None)])
    _planned(climate_all, ids[1], [
        ('off', '2019-06-01 10:00:00.000000', '2019-06-01 12:00:00.000000'),
        ('on', '2019-06-01 12:00:00.000000', None)])
    period = ('--start', '2019-06-01 00:00', '--end', '2019-06-02 00:00')
    done = cli('usage-energy', *period, '--step', '12h', '-f', 'json')
    assert done.code == 0, done
    steps = json.loads(done.out)
    watts = float(done.err.split(' kWh saved at ')[1].split(' W')[0])
    assert [(s['start'], s['hours_off']) for s in steps] == [
        ('2019-06-01 00:00:00', 8.0), ('2019-06-01 12:00:00', 0.0)]
    assert steps[0]['kwh_saved'] == round(8 * watts / 1000, 3)
    assert '8.0 host-hours off' in done.err, done
    chart = tmp_path / 'energy.png'
    done = cli('usage-energy', *period, '--by-host', '--plot', str(chart),
               '-f', 'json')
    assert done.code == 0, done
    hosts = json.loads(done.out)
    assert [(h['hypervisor_hostname'], h['hours_off']) for h in hosts] == [
        (first, 6.0), (second, 2.0)]
    assert chart.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    done = cli('usage-energy', '--step', '0h')
    assert done.code == 1
    assert 'step must be positive' in done.err, done


def test_the_power_commands_show_each_hosts_watts(cli, climate_all):
    tag = _tag()
    first, second = _hosts(cli, tag, 2)
    ids = [json.loads(cli('host-show', name, '-f', 'json').out)['id']
           for name in (first, second)]
    # a day of 2018 no other test writes power history for
    _planned(climate_all, ids[0], [
        ('off', '2018-03-01 02:00:00.000000', '2018-03-01 08:00:00.000000'),
        ('on', '2018-03-01 08:00:00.000000', None)], watts=212.5)
    _planned(climate_all, ids[1], [
        ('off', '2018-03-01 10:00:00.000000', '2018-03-01 12:00:00.000000'),
        ('on', '2018-03-01 12:00:00.000000', None)])
    listed = {r['hypervisor_hostname']: r for r in json.loads(
        cli('host-power-list', '-f', 'json').out)}
    assert (listed[first]['idle_watts'], listed[second]['idle_watts']) == (
        212.5, None)
    period = ('--start', '2018-03-01 00:00', '--end', '2018-03-02 00:00')
    done = cli('host-power-show', first, *period, '-f', 'json')
    assert done.code == 0, done
    power = json.loads(done.out)
    assert (power['idle_watts'], power['watts_source'],
            power['watts_at']) == (212.5, 'measured', '2018-03-01 02:00:00')
    assert power['kwh_saved'] == round(6 * 212.5 / 1000, 3)
    power = json.loads(cli('host-power-show', second, *period, '-f',
                           'json').out)
    assert power['watts_source'] == 'configured'
    assert power['watts_at'] is None
    done = cli('usage-energy', *period, '--by-host', '-f', 'json')
    assert done.code == 0, done
    assert '(1 host(s) at their measured watts)' in done.err, done
    hosts = {h['hypervisor_hostname']: h for h in json.loads(done.out)}
    assert (hosts[first]['idle_watts'], hosts[first]['watts_source']) == (
        212.5, 'measured')
    assert hosts[second]['watts_source'] == 'configured'
    assert hosts[second]['idle_watts'] == power['idle_watts']
