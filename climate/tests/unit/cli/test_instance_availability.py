"""``climate instance-availability`` on its own: the query it sends and
what it prints, with a client that records the calls (no server)."""

import io

import pytest

from climate.cli import availability
from climate.cli import client as climate_client
from climate.cli import parsing


class FakeInstances:
    def __init__(self, answer):
        self.answer = answer
        self.queries = []

    def availability(self, query):
        self.queries.append(query)
        return self.answer


class FakeApp:
    def __init__(self, answer):
        self.client = type('C', (), {})()
        self.client.instances = FakeInstances(answer)
        self.stdout = io.StringIO()
        self.stderr = io.StringIO()


WINDOWS = {'amount': 2, 'windows': [
    {'start': '2090-01-01T03:00:00.000000',
     'end': '2090-01-01T04:00:00.000000', 'slots_free': 8},
    {'start': '2090-01-01T04:00:00.000000',
     'end': '2090-01-01T05:00:00.000000', 'slots_free': 2}]}


def run(*argv, answer=WINDOWS):
    app = FakeApp(answer)
    cmd = availability.InstanceAvailability(app, None)
    args = cmd.get_parser('climate instance-availability').parse_args(
        list(argv))
    columns, rows = cmd.take_action(args)
    return app, columns, list(rows)


def test_a_search_by_duration_sends_what_was_given():
    app, columns, rows = run(
        '--amount', '2', '--vcpus', '1', '--memory-mb', '512', '--disk-gb',
        '1', '--duration', '1h', '--earliest-start', '2090-01-01 00:00',
        '--latest-end', '2090-01-02 00:00', '--affinity', 'False',
        '--resource-properties', '["=", "$gpu", "true"]', '--limit', '2')
    assert app.client.instances.queries == [{
        'amount': 2, 'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
        'duration': '1h', 'earliest_start': '2090-01-01 00:00',
        'latest_end': '2090-01-02 00:00', 'affinity': False,
        'resource_properties': '["=", "$gpu", "true"]', 'limit': 2}]
    assert columns == ('start', 'end', 'slots_free')
    assert rows == [('2090-01-01 03:00:00', '2090-01-01 04:00:00', 8),
                    ('2090-01-01 04:00:00', '2090-01-01 05:00:00', 2)]
    assert app.stderr.getvalue() == ''


def test_defaults_and_a_flavor():
    app, _, _ = run('--flavor-id', 'm1.small', '--duration', '2d')
    assert app.client.instances.queries == [{
        'amount': 1, 'flavor_id': 'm1.small', 'duration': '2d'}]


@pytest.mark.parametrize('text,value', [('true', True), ('TRUE', True),
                                        ('false', False), ('none', None)])
def test_affinity(text, value):
    app, _, _ = run('--vcpus', '1', '--duration', '1h', '--affinity', text)
    query = app.client.instances.queries[0]
    if value is None:
        assert 'affinity' not in query  # the server's default: anywhere
    else:
        assert query['affinity'] is value


def test_bad_affinity_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        run('--vcpus', '1', '--duration', '1h', '--affinity', 'maybe')
    assert info.value.code == 2
    assert "expected true (all on one host), false (each on a different " \
        "host) or none (anywhere), not 'maybe'" in capsys.readouterr().err


def test_a_fixed_window_says_how_many_fit():
    answer = dict(WINDOWS, requested={
        'start': '2090-01-01T00:00:00.000000',
        'end': '2090-01-01T01:00:00.000000', 'slots_free': 1,
        'fits': False})
    app, _, rows = run('--amount', '2', '--vcpus', '1', '--memory-mb', '512',
                       '--disk-gb', '1', '--start-date', '2090-01-01 00:00',
                       '--end-date', '2090-01-01 01:00', answer=answer)
    assert app.client.instances.queries == [{
        'amount': 2, 'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
        'start_date': '2090-01-01 00:00', 'end_date': '2090-01-01 01:00'}]
    assert app.stderr.getvalue() == (
        'From 2090-01-01 00:00:00 to 2090-01-01 01:00:00: 1 slot(s) free, '
        'not enough for 2.\n')
    assert len(rows) == 2

    answer['requested']['fits'] = True
    app, _, _ = run('--vcpus', '1', '--start-date', 'now', '--end-date',
                    '2090-01-01 01:00', answer=answer)
    assert app.stderr.getvalue().endswith('1 slot(s) free, enough.\n')


@pytest.mark.parametrize('argv,message', [
    ((), "give --duration (e.g. '4h'), or --start-date and --end-date"),
    (('--start-date', 'now'), '--start-date needs --end-date'),
    (('--end-date', '2090-01-01 00:00'), '--end-date needs --start-date'),
    (('--duration', '1h', '--start-date', 'now', '--end-date',
      '2090-01-01 00:00'),
     'give either --start-date and --end-date, or --duration (with '
     '--earliest-start, --latest-end); not --duration with --start-date '
     'and --end-date'),
    (('--latest-end', '2090-01-01 00:00', '--start-date', 'now'),
     'give either --start-date and --end-date, or --duration (with '
     '--earliest-start, --latest-end); not --latest-end with '
     '--start-date'),
    (('--duration', '1x'),
     "--duration must be a whole number followed by s, m, h, d or w "
     "(e.g. '2h'), not '1x'"),
], ids=['no-window', 'start-only', 'end-only', 'both-kinds',
        'latest-end-with-start', 'bad-duration'])
def test_window_options_that_do_not_go_together(argv, message):
    with pytest.raises(parsing.BadArgument) as info:
        run('--vcpus', '1', *argv)
    assert str(info.value) == message


def test_the_client_asks_for_1_3():
    calls = []

    class Recorder(climate_client.Client):
        def __init__(self):
            self.instances = climate_client.Instances(self)

        def request(self, *args, **kwargs):
            calls.append((args, kwargs))
            return {'availability': {'windows': []}}

    assert Recorder().instances.availability({'amount': 1}) == {
        'windows': []}
    assert calls == [(('POST', '/instances/availability'), {
        'body': {'amount': 1}, 'version': '1.3'})]
