"""``climate lease-*`` against a running climate-all (real HTTP).

The main paths run ``climate`` as a subprocess; the many bad-input cases
run the same App in this process.  Each test works in a noauth project of
its own (``--noauth-project-id``), so tests never see each other's leases.
"""

import datetime
import json
import re
import time
import uuid

import yaml

REQUEST_ID = r'\(Request-ID: req-[0-9a-f-]{36}\)'
ISO = '%Y-%m-%dT%H:%M:%S'


def _project():
    return 'cli-%s' % uuid.uuid4().hex[:10]


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None, microsecond=0)


def _later(**delta):
    return (_utcnow() + datetime.timedelta(**delta)).strftime(ISO)


def _api_date(text):
    return datetime.datetime.fromisoformat(text).replace(microsecond=0)


def _wait_status(api, lease_id, status, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        lease = api.request('GET', '/v1/leases/%s' % lease_id).json()['lease']
        if lease['status'] == status or time.monotonic() > deadline:
            return lease
        time.sleep(0.2)


def test_lease_lifecycle_subprocess(climate_all):
    project = _project()
    api = climate_all.api(project)
    end = _later(hours=3)

    made = climate_all.run('lease-create', 'cli-life', '--reservation',
                           'resource_type=noop,flavour=vanilla,size=2',
                           '--end-date', end, '-f', 'json',
                           project=project)
    assert made.code == 0, made
    lease = json.loads(made.out)
    assert lease['name'] == 'cli-life'
    assert lease['project_id'] == project
    stored = api.request('GET', '/v1/leases/%s' % lease['id']).json()[
        'lease']
    assert stored['end_date'].startswith(end)
    assert stored['reservations'][0]['resource_type'] == 'noop'
    # numbers travel as numbers, like python-blazarclient sends them
    assert stored['reservations'][0]['size'] == 2
    assert stored['reservations'][0]['flavour'] == 'vanilla'

    listed = climate_all.run('lease-list', '-f', 'json', project=project)
    assert listed.code == 0, listed
    assert [(r['id'], r['name']) for r in json.loads(listed.out)] == [
        (lease['id'], 'cli-life')]

    # a name where an id goes
    shown = climate_all.run('lease-show', 'cli-life', '-f', 'yaml',
                            project=project)
    assert shown.code == 0, shown
    assert yaml.safe_load(shown.out)['id'] == lease['id']
    value = climate_all.run('lease-show', lease['id'], '-f', 'value', '-c',
                            'name', project=project)
    assert value.out == 'cli-life\n'

    updated = climate_all.run('lease-update', 'cli-life', '--name',
                              'cli-life-2', '--prolong-for', '1h', '-f',
                              'json', project=project)
    assert updated.code == 0, updated
    after = json.loads(updated.out)
    assert after['name'] == 'cli-life-2'
    assert _api_date(after['end_date']) - _api_date(stored['end_date']) == \
        datetime.timedelta(hours=1)

    deleted = climate_all.run('lease-delete', 'cli-life-2', project=project)
    assert deleted.code == 0, deleted
    assert deleted.out == 'Deleted lease cli-life-2 (%s)\n' % lease['id']
    assert api.request('GET', '/v1/leases/%s' % lease['id'],
                       expect=(404,)).status_code == 404


def test_table_output_subprocess(climate_all):
    project = _project()
    made = climate_all.run('lease-create', 'cli-table', '--reservation',
                           'resource_type=noop', '--end-date',
                           _later(hours=1), project=project)
    assert made.code == 0, made
    lines = made.out.splitlines()
    assert re.match(r'^\| Field +\| Value +\|$', lines[1])
    assert any(re.match(r'^\| name +\| cli-table +\|$', line)
               for line in lines)
    listed = climate_all.run('lease-list', project=project)
    assert re.search(r'\| id +\| name +\| start_date +\| end_date +\| '
                     r'status +\|', listed.out)
    assert 'cli-table' in listed.out


def test_unknown_lease_subprocess(climate_all):
    shown = climate_all.run('lease-show', 'no-such-lease')
    assert shown.code == 1
    assert shown.out == ''
    assert shown.err == "No lease with a name or id of 'no-such-lease' " \
                        "exists.\n"


def test_server_message_and_request_id_subprocess(climate_all):
    project = _project()
    bad = climate_all.run('lease-create', 'cli-bad-date', '--reservation',
                          'resource_type=noop', '--start-date', 'tomorrow',
                          '--end-date', '2030-01-01 10:00', project=project)
    assert bad.code == 1
    assert re.fullmatch(
        r"tomorrow is an invalid date\. Required format: %Y-%m-%d %H:%M\. "
        r"Invalid start_date 'tomorrow': use 'YYYY-MM-DD HH:MM', 'now' or "
        r"ISO 8601 \(e\.g\. 2030-01-31T12:00:00\+01:00\)\. \(HTTP 400\) " +
        REQUEST_ID + r'\n', bad.err), bad
    assert 'Traceback' not in bad.err
    # nothing was written
    api = climate_all.api(project)
    assert api.request('GET', '/v1/leases').json()['leases'] == []


def test_debug_shows_traceback_subprocess(climate_all):
    shown = climate_all.run('--debug', 'lease-show', 'no-such-lease')
    assert shown.code == 1
    assert 'Traceback (most recent call last)' in shown.err
    assert "NotFound: No lease with a name or id of 'no-such-lease' " \
           "exists." in shown.err


def test_unreachable_api_subprocess(climate_all):
    from climate.tests.functional import procs
    port = procs.free_port()
    done = climate_all.run('--os-endpoint', 'http://127.0.0.1:%d' % port,
                           'lease-list', endpoint=False)
    assert done.code == 1
    assert done.err == ('Cannot reach the reservation API at '
                        'http://127.0.0.1:%d/v1: [Errno 111] Connection '
                        'refused\n' % port)


# -- in process: many small cases --------------------------------------------

def test_malformed_reservation(cli):
    cases = {
        'resource_type=noop,oops': "--reservation 'resource_type=noop,oops"
                                   "': 'oops' is not a key=value pair "
                                   "(expected key=value[,key=value...])",
        'min=1,max=2': "--reservation 'min=1,max=2': resource_type is "
                       "required (e.g. resource_type=physical:host,min=1,"
                       "max=2)",
        'resource_type=noop,a=1,a=2': "--reservation 'resource_type=noop,"
                                      "a=1,a=2': key 'a' is given twice",
        '=noop': "--reservation '=noop': '=noop' is not a key=value pair "
                 "(expected key=value[,key=value...])",
        ' ': '--reservation is empty: expected key=value[,key=value...]',
    }
    project = _project()
    for text, message in cases.items():
        done = cli('lease-create', 'bad', '--reservation', text,
                   '--end-date', _later(hours=1), project=project)
        assert (done.code, done.err) == (1, message + '\n'), done
    assert cli('lease-list', '-f', 'json',
               project=project).out.strip() == '[]'


def test_reservation_values_with_commas(cli, climate_all):
    project = _project()
    done = cli('lease-create', 'commas', '--reservation',
               'resource_type=noop,filter=[">=", "$vcpus", "4"],'
               'note={"a": "b,c"}', '--end-date', _later(hours=1), '-f',
               'json', project=project)
    assert done.code == 0, done
    res = json.loads(done.out)['reservations'][0]
    assert res['filter'] == '[">=", "$vcpus", "4"]'
    assert res['note'] == '{"a": "b,c"}'


def test_bad_dates(cli):
    project = _project()
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--start-date', '31/12/2030', project=project)
    assert (done.code, done.err) == (1, (
        "Invalid --start-date '31/12/2030': use 'YYYY-MM-DD HH:MM', 'now' "
        "or ISO 8601 (e.g. 2030-01-31T12:00:00+01:00).\n")), done
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--end-date', '2030-02-30 10:00', project=project)
    assert done.code == 1
    assert re.fullmatch(
        r"2030-02-30 10:00 is an invalid date\. Required format: "
        r"%Y-%m-%d %H:%M\. "
        r"Invalid end_date '2030-02-30 10:00': use 'YYYY-MM-DD HH:MM', "
        r"'now' or ISO 8601 \(e\.g\. 2030-01-31T12:00:00\+01:00\)\. "
        r"\(HTTP 400\) " + REQUEST_ID + r'\n', done.err), done
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--start-date', '2020-01-01 10:00', '--end-date',
               '2020-01-02 10:00', project=project)
    assert done.code == 1
    assert re.fullmatch(r'Start date must be later than current date\. '
                        r'start_date 2020-01-01 10:00 is in '
                        r'the past \(now is [0-9: -]+ UTC\)\. \(HTTP 400\) ' +
                        REQUEST_ID + r'\n', done.err), done
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--end-date', _later(hours=1), '--before-end-date',
               _later(hours=2), project=project)
    assert re.fullmatch(r'Datetime is out of lease limits\. before_end_date '
                        r'[0-9: -]+ must be after start_date [0-9: -]+ and '
                        r'before end_date [0-9: -]+\. \(HTTP 403\) ' +
                        REQUEST_ID + r'\n', done.err), done
    assert cli('lease-list', '-f', 'json',
               project=project).out.strip() == '[]'


def test_unknown_resource_type(cli):
    done = cli('lease-create', 'x', '--reservation',
               'resource_type=physical:cloud', '--end-date', _later(hours=1),
               project=_project())
    assert done.code == 1
    assert re.fullmatch(r"The physical:cloud resource type is not "
                        r"supported\. This cloud offers: [a-z:, ]+\. "
                        r"\(HTTP 400\) " +
                        REQUEST_ID + r'\n', done.err), done


def test_start_date_and_defaults(cli):
    project = _project()
    start = _later(hours=2)
    done = cli('lease-create', 'later', '--reservation',
               'resource_type=noop', '--start-date', start, '-f', 'json',
               project=project)
    assert done.code == 0, done
    lease = json.loads(done.out)
    assert lease['status'] == 'PENDING'
    # no --end-date: one day after the start
    assert _api_date(lease['end_date']) - _api_date(lease['start_date']) \
        == datetime.timedelta(days=1)
    moved = json.loads(cli('lease-update', 'later', '--defer-by', '30m',
                           '--reduce-by', '2h', '-f', 'json',
                           project=project).out)
    assert _api_date(moved['start_date']) == _api_date(
        lease['start_date']) + datetime.timedelta(minutes=30)
    assert _api_date(moved['end_date']) == _api_date(
        lease['end_date']) - datetime.timedelta(hours=2)
    back = json.loads(cli('lease-update', moved['id'], '--advance-by', '15m',
                          '--end-date', _later(hours=30), '-f', 'json',
                          project=project).out)
    assert _api_date(back['start_date']) == _api_date(
        moved['start_date']) - datetime.timedelta(minutes=15)


def test_update_errors(cli):
    project = _project()
    cli('lease-create', 'upd', '--reservation', 'resource_type=noop',
        '--start-date', _later(hours=1), '--end-date', _later(hours=5),
        project=project)
    done = cli('lease-update', 'upd', project=project)
    assert (done.code, done.err) == (1, 'Nothing to change: give --name, a '
                                        'date option or --reservation.\n')
    done = cli('lease-update', 'upd', '--prolong-for', 'two hours',
               project=project)
    assert (done.code, done.err) == (1, (
        "--prolong-for must be a whole number followed by s, m, h, d or w "
        "(e.g. '2h'), not 'two hours'\n"))
    done = cli('lease-update', 'upd', '--prolong-for', '1h', '--reduce-by',
               '1h', project=project)
    assert done.code == 2
    assert 'argument --reduce-by: not allowed with argument --prolong-for' \
        in done.err
    done = cli('lease-update', 'nope', '--name', 'x', project=project)
    assert (done.code, done.err) == (
        1, "No lease with a name or id of 'nope' exists.\n")
    done = cli('lease-update', 'upd', '--reduce-by', '4h', project=project)
    assert done.code == 1
    assert re.fullmatch(r'The end_date must be later than the start_date\. '
                        r'Both are [0-9: -]+\. \(HTTP 400\) ' + REQUEST_ID +
                        r'\n', done.err), done


def test_update_reservation(cli):
    project = _project()
    made = json.loads(cli('lease-create', 'res', '--reservation',
                          'resource_type=noop,colour=red', '--start-date',
                          _later(hours=1), '--end-date', _later(hours=2),
                          '-f', 'json', project=project).out)
    # a lease with one reservation: id= may be left out
    done = cli('lease-update', 'res', '--reservation', 'colour=blue', '-f',
               'json', project=project)
    assert done.code == 0, done
    assert json.loads(done.out)['reservations'][0]['colour'] == 'blue'
    res_id = made['reservations'][0]['id']
    done = cli('lease-update', 'res', '--reservation',
               'id=%s,colour=green' % res_id, '-f', 'json', project=project)
    assert json.loads(done.out)['reservations'][0]['colour'] == 'green'

    two = json.loads(cli('lease-create', 'two', '--reservation',
                         'resource_type=noop', '--reservation',
                         'resource_type=noop', '--start-date',
                         _later(hours=1), '--end-date', _later(hours=2),
                         '-f', 'json', project=project).out)
    done = cli('lease-update', 'two', '--reservation', 'colour=blue',
               project=project)
    assert (done.code, done.err) == (1, (
        "--reservation 'colour=blue': give id=<reservation id>: lease %s "
        "has 2 reservations\n" % two['id']))


def test_list_pagination_and_filters(cli, climate_all):
    project = _project()
    names = ['page-%d' % i for i in range(5)]
    for index, name in enumerate(names):
        start = 'now' if index < 2 else _later(hours=index)
        done = cli('lease-create', name, '--reservation',
                   'resource_type=noop', '--start-date', start,
                   '--end-date', _later(hours=10 + index), project=project)
        assert done.code == 0, done
    api = climate_all.api(project)
    for lease in api.request('GET', '/v1/leases?name=page-0').json()[
            'leases'] + api.request('GET', '/v1/leases?name=page-1').json()[
            'leases']:
        _wait_status(api, lease['id'], 'ACTIVE')

    def names_of(*args):
        if '--sort-key' not in args:
            args += ('--sort-key', 'name')
        done = cli('lease-list', '-f', 'json', *args, project=project)
        assert done.code == 0, done
        return [row['name'] for row in json.loads(done.out)]

    # the server's default page is 3 leases (conftest): all 5 are listed
    assert names_of() == names
    assert names_of('--limit', '2') == names[:2]
    first_two = json.loads(cli('lease-list', '-f', 'json', '--limit', '2',
                               '--sort-key', 'name', project=project).out)
    assert names_of('--limit', '2', '--marker', first_two[-1]['id']) == \
        names[2:4]
    assert names_of('--sort-key', 'name', '--sort-dir', 'desc') == \
        names[::-1]
    assert names_of('--status', 'active') == names[:2]
    assert names_of('--status', 'PENDING', '--status', 'ACTIVE') == names
    assert names_of('--name', 'page-3') == ['page-3']
    assert names_of('--time-to', _later(hours=2, minutes=30)) == names[:3]
    assert names_of('--time-from', _later(hours=11, minutes=30)) == \
        names[2:]
    done = cli('lease-list', '--limit', '0', project=project)
    assert (done.code, done.err) == (1, '--limit must be a positive '
                                        'integer\n')
    done = cli('lease-list', '--time-from', 'yesterday', project=project)
    assert done.code == 1
    assert re.fullmatch(r"yesterday is an invalid date\. Required format: "
                        r"%Y-%m-%d %H:%M\. "
                        r"Invalid time_from 'yesterday': use 'YYYY-MM-DD "
                        r"HH:MM', 'now' or ISO 8601 \(e\.g\. 2030-01-31T12:"
                        r"00:00\+01:00\)\. \(HTTP 400\) " + REQUEST_ID +
                        r'\n', done.err), done
    long = json.loads(cli('lease-list', '--long', '-f', 'json', '--name',
                          'page-0', project=project).out)
    assert long[0]['project_id'] == project
    assert long[0]['reservations'][0]['resource_type'] == 'noop'


def test_admin_lists_another_project(cli):
    other = _project()
    cli('lease-create', 'theirs', '--reservation', 'resource_type=noop',
        '--end-date', _later(hours=1), project=other)
    mine = _project()
    done = cli('lease-list', '--project-id', other, '-f', 'value', '-c',
               'name', project=mine, roles='admin,member,reader')
    assert (done.code, done.out) == (0, 'theirs\n')
    done = cli('lease-list', '--project-id', other, project=mine)
    assert done.code == 1
    assert re.fullmatch(r"Policy doesn't allow climate:leases:list:"
                        r"all_projects to be performed\. \(HTTP 403\) " +
                        REQUEST_ID + r'\n', done.err), done


def test_delete_several_and_errors(cli):
    project = _project()
    for name in ('d1', 'd2'):
        cli('lease-create', name, '--reservation', 'resource_type=noop',
            '--start-date', _later(hours=1), '--end-date', _later(hours=2),
            project=project)
    done = cli('lease-delete', 'd1', 'ghost', 'd2', project=project)
    assert done.code == 1
    assert done.out.startswith('Deleted lease d1 (')
    assert 'Deleted lease d2 (' in done.out
    assert done.err == ("Cannot delete lease ghost: No lease with a name or "
                        "id of 'ghost' exists.\n"
                        "1 of 3 leases were not deleted.\n")
    assert cli('lease-list', '-f', 'json',
               project=project).out.strip() == '[]'


def test_lease_timeline(cli):
    project = _project()
    made = json.loads(cli('lease-create', 'drawn', '--reservation',
                          'resource_type=noop', '--start-date',
                          _later(hours=1), '--end-date', _later(hours=3),
                          '-f', 'json', project=project).out)
    done = cli('lease-show', 'drawn', '--timeline', project=project)
    assert done.code == 0, done
    lines = done.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].startswith('Lease drawn (UTC), ')
    row = next(line for line in lines if line.startswith('lease '))
    bar = row[row.index('|') + 1:row.rindex('|')]
    # the window is the middle 2 h of a 2 h 24 min range
    assert bar.strip('.') == 'A' * len(bar.strip('.'))
    assert 0.75 < len(bar.strip('.')) / len(bar) < 0.9
    assert any(line.startswith('noop ') for line in lines)
    # the lease starts in an hour: now is before the range drawn
    assert '^ now' not in done.out
    assert 'A  drawn (%s)' % made['id'] in done.out.replace('\n   ', ' ')


def test_lease_types(cli):
    project = _project()
    done = cli('lease-create', 'booked', '--reservation',
               'resource_type=noop', '--lease-type', 'scheduled',
               '--start-date', _later(hours=2), '-f', 'json',
               project=project)
    assert done.code == 0, done
    lease = json.loads(done.out)
    assert (lease['status'], lease['lease_type']) == ('INACTIVE',
                                                      'scheduled')
    assert lease['capacity_guaranteed'] is True
    # shown as it is (1.11), in a listing too
    listed = json.loads(cli('lease-list', '-f', 'json', project=project).out)
    assert [(item['name'], item['status']) for item in listed] == [
        ('booked', 'INACTIVE')]
    done = cli('lease-create', 'patient', '--reservation',
               'resource_type=noop', '--lease-type', 'with_retries',
               '--max-retries', '3', '--end-date', _later(hours=1),
               '-f', 'json', project=project)
    assert done.code == 0, done
    lease = json.loads(done.out)
    # nothing to wait for: granted at once, its start due now
    assert (lease['lease_type'], lease['max_retries'],
            lease['retry_attempts']) == ('with_retries', 3, 1)
    assert lease['status'] in ('STARTING', 'ACTIVE'), lease
    shown = cli('lease-show', 'patient', '-f', 'json', project=project)
    assert json.loads(shown.out)['lease_type'] == 'with_retries'


def test_lease_type_errors(cli):
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--max-retries', '2')
    assert done.code != 0
    assert '--max-retries is for --lease-type with_retries.' in done.err
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--lease-type', 'immediate', '--start-date', _later(hours=1))
    assert done.code != 0
    assert 'a lease of type immediate starts now' in done.err, done
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--lease-type', 'sometimes')
    assert done.code != 0
    assert "invalid choice: 'sometimes'" in done.err, done


def test_lease_holds(cli):
    project = _project()
    done = cli('lease-create', 'held', '--reservation', 'resource_type=noop',
               '--start-date', _later(hours=2), '--end-date',
               _later(hours=3), '--hold-for', '600', '-f', 'json',
               project=project)
    assert done.code == 0, done
    lease = json.loads(done.out)
    assert lease['status'] == 'HELD', lease
    expires = _api_date(lease['hold_expires_at'])
    assert abs((expires - _utcnow()).total_seconds() - 600) < 30
    # shown as it is (1.14), in a listing too
    listed = json.loads(cli('lease-list', '-f', 'json', project=project).out)
    assert [(item['name'], item['status']) for item in listed] == [
        ('held', 'HELD')]
    done = cli('lease-confirm', 'held', '-f', 'json', project=project)
    assert done.code == 0, done
    confirmed = json.loads(done.out)
    assert (confirmed['id'], confirmed['status']) == (lease['id'],
                                                      'PENDING')
    done = cli('lease-confirm', 'held', project=project)
    assert done.code != 0
    assert 'cannot be confirmed: it is PENDING, not HELD' in done.err, done
    done = cli('lease-create', 'x', '--reservation', 'resource_type=noop',
               '--hold-for', '0', project=project)
    assert done.code != 0
    assert 'hold_for must be a whole number of seconds from 1 to' in \
        done.err, done


def test_recurring_series(cli):
    project = _project()
    start = _utcnow() + datetime.timedelta(hours=2)
    done = cli('series-create', 'lab', '--reservation', 'resource_type=noop',
               '--start-date', start.strftime(ISO), '--end-date',
               (start + datetime.timedelta(hours=1)).strftime(ISO),
               '--rrule', 'FREQ=DAILY;COUNT=3', '--timezone', 'Europe/Paris',
               '--on-conflict', 'skip', '-f', 'json', project=project)
    assert done.code == 0, done
    series = json.loads(done.out)
    assert series['recurrence'] == {'rrule': 'FREQ=DAILY;COUNT=3',
                                    'timezone': 'Europe/Paris',
                                    'on_conflict': 'skip'}
    assert [o['name'] for o in series['occurrences']] == [
        'lab #1', 'lab #2', 'lab #3']
    # each occurrence a lease of its own
    listed = json.loads(cli('lease-list', '-f', 'json', project=project).out)
    assert sorted(item['name'] for item in listed) == [
        'lab #1', 'lab #2', 'lab #3']
    shown = json.loads(cli('series-list', '-f', 'json',
                           project=project).out)
    assert [(s['name'], s['status']) for s in shown] == [('lab', 'ACTIVE')]
    later = start + datetime.timedelta(days=1, hours=1)
    done = cli('series-update', 'lab', '--from-occurrence', '2',
               '--start-date', later.strftime(ISO), '--end-date',
               (later + datetime.timedelta(hours=1)).strftime(ISO),
               '-f', 'json', project=project)
    assert done.code == 0, done
    moved = json.loads(done.out)
    assert moved['first_occurrence'] == 2
    assert [o['occurrence'] for o in moved['occurrences']] == [1, 2, 3]
    done = cli('series-update', 'lab', '--timezone', 'UTC', project=project)
    assert done.code != 0
    assert '--timezone and --on-conflict go with a new --rrule' in done.err
    done = cli('series-create', 'bad', '--reservation', 'resource_type=noop',
               '--rrule', 'FREQ=HOURLY;COUNT=2', project=project)
    assert done.code != 0
    assert "FREQ must be DAILY or WEEKLY, not 'HOURLY'" in done.err, done
    done = cli('series-delete', 'lab', project=project)
    assert done.code == 0, done
    assert 'Deleted series lab (' in done.out
    assert json.loads(cli('lease-list', '-f', 'json',
                          project=project).out) == []
    shown = json.loads(cli('series-show', 'lab', '-f', 'json',
                           project=project).out)
    assert shown['status'] == 'CANCELLED'


ADMIN = 'admin,member,reader'


def test_maintenance_windows(cli):
    project = _project()
    start = _utcnow() + datetime.timedelta(days=400, hours=1)
    window = ['--start-date', start.strftime(ISO), '--end-date',
              (start + datetime.timedelta(hours=2)).strftime(ISO)]
    done = cli('host-create', 'mw-host-%s' % project, project=project,
               roles=ADMIN)
    assert done.code == 0, done
    host = 'mw-host-%s' % project
    done = cli('lease-create', 'on-it', '--reservation',
               'resource_type=physical:host,min=1,max=1,'
               'hypervisor_properties=["=", "$hypervisor_hostname", '
               '"%s"]' % host, *window, '-f', 'json', project=project)
    assert done.code == 0, done
    lease = json.loads(done.out)
    done = cli('maintenance-plan', 'mw-%s' % project, '--host', host,
               *window, '-f', 'json', project=project, roles=ADMIN)
    assert done.code == 0, done
    plan = json.loads(done.out)
    assert [(hit['lease_id'], sorted(hit['options'])) for hit in
            plan['affected']] == [(lease['id'], ['leave'])]
    done = cli('maintenance-create', 'mw-%s' % project, '--host', host,
               *window, project=project, roles=ADMIN)
    assert done.code != 0
    assert 'hits leases without an action' in done.err, done
    done = cli('maintenance-create', 'mw-%s' % project, '--host', host,
               *window, '--action', '%s=shorten' % lease['id'],
               project=project, roles=ADMIN)
    assert done.code != 0
    assert 'cannot shorten lease' in done.err, done
    done = cli('maintenance-create', 'mw-%s' % project, '--host', host,
               *window, '--action', 'nonsense', project=project,
               roles=ADMIN)
    assert done.code != 0
    assert "--action 'nonsense'" in done.err, done
    done = cli('lease-delete', 'on-it', project=project)
    assert done.code == 0, done
    done = cli('maintenance-create', 'mw-%s' % project, '--host', host,
               *window, '--reason', 'firmware', '-f', 'json',
               project=project, roles=ADMIN)
    assert done.code == 0, done
    applied = json.loads(done.out)
    assert applied['status'] == 'APPLIED' and applied['affected'] == []
    done = cli('maintenance-delete', 'mw-%s' % project, project=project,
               roles=ADMIN)
    assert done.code == 0, done
    shown = json.loads(cli('maintenance-show', 'mw-%s' % project, '-f',
                           'json', project=project, roles=ADMIN).out)
    assert shown['status'] == 'CANCELLED'


def test_idle_policies(cli):
    project = _project()
    done = cli('idle-policy-show', project, project=project)
    assert done.code != 0
    assert 'has no idle policy' in done.err, done
    done = cli('idle-policy-set', project, '--warn-after', '3600',
               '--end-after', '7200', '--resource-type', 'physical:host',
               '-f', 'json', project=project, roles=ADMIN)
    assert done.code == 0, done
    policy = json.loads(done.out)
    assert (policy['warn_after'], policy['end_after'],
            policy['resource_types']) == (3600, 7200, ['physical:host'])
    done = cli('idle-policy-set', project, '--warn-after', '0',
               project=project, roles=ADMIN)
    assert done.code != 0
    assert 'warn_after must be a whole number of seconds, at least 1' in \
        done.err, done
    shown = json.loads(cli('idle-policy-show', project, '-f', 'json',
                           project=project).out)
    assert shown['warn_after'] == 3600
    done = cli('lease-create', 'kept', '--reservation', 'resource_type=noop',
               '--start-date', _later(hours=2), '--end-date',
               _later(hours=3), '--keep-idle', '-f', 'json',
               project=project)
    assert done.code == 0, done
    assert json.loads(done.out)['keep_idle'] is True
    done = cli('idle-policy-delete', project, project=project, roles=ADMIN)
    assert done.code == 0, done
