"""``climate volume-availability`` and ``climate volume-pool-calendar``
on their own: what they send and what they print, with a client that
records the calls (no server); the timeline's lanes and notes."""

import datetime
import io

import pytest

from climate.cli import availability
from climate.cli import calendar
from climate.cli import client as climate_client
from climate.cli import parsing
from climate.cli import timeline as tl

T0 = datetime.datetime(2090, 1, 1)


def h(hours):
    return T0 + datetime.timedelta(hours=hours)


def iso(hours):
    return h(hours).strftime('%Y-%m-%dT%H:%M:%S.000000')


class Recorder:
    """A client manager answering ``answer`` to every call, recording
    them."""

    def __init__(self, **answers):
        self.answers = answers
        self.calls = []

    def __getattr__(self, name):
        if name not in self.answers:
            raise AttributeError(name)

        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            answer = self.answers[name]
            return answer(*args) if callable(answer) else answer
        return call


class FakeApp:
    def __init__(self, **managers):
        self.client = type('C', (), {})()
        for name, manager in managers.items():
            setattr(self.client, name, manager)
        self.stdout = io.StringIO()
        self.stderr = io.StringIO()


# -- volume-availability --------------------------------------------------------

WINDOWS = {'size_gb': 20, 'windows': [
    {'start': iso(2), 'end': iso(3), 'gb_free': 50},
    {'start': iso(3), 'end': iso(4), 'gb_free': 100}]}


def run_availability(*argv, answer=WINDOWS):
    app = FakeApp(volumes=Recorder(availability=answer))
    cmd = availability.VolumeAvailability(app, None)
    args = cmd.get_parser('climate volume-availability').parse_args(
        list(argv))
    columns, rows = cmd.take_action(args)
    return app, columns, list(rows)


def queries(app):
    return [args[0] for _name, args, _kw in app.client.volumes.calls]


def test_a_search_by_duration_sends_what_was_given():
    app, columns, rows = run_availability(
        '--size-gb', '20', '--count', '2', '--volume-type', 'fast',
        '--resource-properties', '["=", "$tier", "gold"]', '--duration',
        '1h', '--earliest-start', '2090-01-01 00:00', '--latest-end',
        '2090-01-02 00:00', '--limit', '2')
    assert queries(app) == [{
        'size_gb': 20, 'count': 2, 'volume_type': 'fast',
        'resource_properties': '["=", "$tier", "gold"]', 'duration': '1h',
        'earliest_start': '2090-01-01 00:00',
        'latest_end': '2090-01-02 00:00', 'limit': 2}]
    assert columns == ('start', 'end', 'gb_free')
    assert rows == [('2090-01-01 02:00:00', '2090-01-01 03:00:00', 50),
                    ('2090-01-01 03:00:00', '2090-01-01 04:00:00', 100)]
    assert app.stderr.getvalue() == ''


def test_only_the_size_and_a_duration_are_needed():
    app, _, _ = run_availability('--size-gb', '5', '--duration', '2d')
    assert queries(app) == [{'size_gb': 5, 'duration': '2d'}]


def test_a_fixed_window_says_how_much_is_free():
    answer = dict(WINDOWS, requested={
        'start': iso(0), 'end': iso(2), 'gb_free': 70, 'fits': False})
    app, _, rows = run_availability(
        '--size-gb', '80', '--start-date', '2090-01-01 00:00',
        '--end-date', '2090-01-01 02:00', answer=answer)
    assert queries(app) == [{
        'size_gb': 80, 'start_date': '2090-01-01 00:00',
        'end_date': '2090-01-01 02:00'}]
    assert app.stderr.getvalue() == (
        'From 2090-01-01 00:00:00 to 2090-01-01 02:00:00: 70 GB free on '
        'one pool, not enough for 20 GB.\n')
    assert len(rows) == 2

    answer['requested']['fits'] = True
    app, _, _ = run_availability('--size-gb', '20', '--start-date', 'now',
                                 '--end-date', '2090-01-01 02:00',
                                 answer=answer)
    assert app.stderr.getvalue().endswith('70 GB free on one pool, '
                                          'enough.\n')


def test_the_size_is_required(capsys):
    with pytest.raises(SystemExit) as info:
        run_availability('--duration', '1h')
    assert info.value.code == 2
    assert '--size-gb' in capsys.readouterr().err


@pytest.mark.parametrize('argv,message', [
    ((), "give --duration (e.g. '4h'), or --start-date and --end-date"),
    (('--start-date', 'now'), '--start-date needs --end-date'),
    (('--duration', '1h', '--end-date', '2090-01-01 00:00'),
     'give either --start-date and --end-date, or --duration (with '
     '--earliest-start, --latest-end); not --duration with --end-date'),
    (('--duration', '1x'),
     "--duration must be a whole number followed by s, m, h, d or w "
     "(e.g. '2h'), not '1x'"),
], ids=['no-window', 'start-only', 'both-kinds', 'bad-duration'])
def test_window_options_that_do_not_go_together(argv, message):
    with pytest.raises(parsing.BadArgument) as info:
        run_availability('--size-gb', '1', *argv)
    assert str(info.value) == message


class _Calls(climate_client.Client):
    """A client whose requests are recorded and answered by ``answer``."""

    def __init__(self, answer):
        self.api_version = None
        self.calls = []
        self.answer = answer
        self.volumes = climate_client.Volumes(self)
        self.volume_pools = climate_client.VolumePools(self)

    def request(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.answer


def test_the_client_asks_for_1_6():
    client = _Calls({'availability': {'windows': []}})
    assert client.volumes.availability({'size_gb': 1}) == {'windows': []}
    client.answer = {'allocations': []}
    assert client.volume_pools.allocations(lease_id='L') == []
    assert client.calls == [
        (('POST', '/volumes/availability'), {
            'body': {'size_gb': 1}, 'version': '1.6'}),
        (('GET', '/volume-pools/allocations'), {
            'params': {'lease_id': 'L'}, 'version': '1.6'})]


# -- volume-pool-calendar ----------------------------------------------------

POOLS = [
    {'resource_id': 2, 'name': 'node@ceph#ceph', 'capacity_gb': 50,
     'reservations': [
         {'id': 'r1', 'lease_id': 'L1', 'start_date': iso(2),
          'end_date': iso(8), 'size_gb': 40}]},
    {'resource_id': 1, 'name': 'node@lvm#lvm', 'capacity_gb': 100,
     'reservations': [
         {'id': 'r2', 'lease_id': 'L2', 'start_date': iso(0),
          'end_date': iso(6), 'size_gb': 30},
         {'id': 'r3', 'lease_id': 'L3', 'start_date': iso(4),
          'end_date': iso(12), 'size_gb': 60},
         # L2 grown while active: a second holding from 05:00
         {'id': 'r2', 'lease_id': 'L2', 'start_date': iso(5),
          'end_date': iso(6), 'size_gb': 5}]},
    {'resource_id': 3, 'name': 'node@nfs#nfs', 'capacity_gb': 10,
     'reservations': []},
]
LEASES = [
    {'id': 'L1', 'name': 'gold', 'start_date': iso(2), 'end_date': iso(8)},
    {'id': 'L2', 'name': 'data', 'start_date': iso(0), 'end_date': iso(6)},
]


def _find(ref):
    for pool in POOLS:
        if ref in (pool['name'], str(pool['resource_id'])):
            return {'id': pool['resource_id'], 'name': pool['name']}
    raise climate_client.NotFound('No volume pool %r' % ref)


def run_calendar(*argv):
    app = FakeApp(volume_pools=Recorder(allocations=POOLS, find=_find),
                  leases=Recorder(list=LEASES))
    cmd = calendar.VolumePoolCalendar(app, None)
    args = cmd.get_parser('climate volume-pool-calendar').parse_args(
        list(argv))
    assert cmd.take_action(args) == 0
    return app, app.stdout.getvalue()


def _bars(text):
    return [(line[:line.index('|')].strip(), line[line.index('|') + 1:-1])
            for line in text.splitlines() if '|' in line]


def test_the_pools_across_a_day():
    app, out = run_calendar('--start', iso(0)[:16], '--end', iso(24)[:16])
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == ('Volume pools x time (UTC), 2090-01-01 00:00 -> '
                        '2090-01-02 00:00, 1 column = 30m')
    # by name; overlapping holdings on lvm take a second line
    assert _bars(out) == [
        ('node@ceph#ceph', '....' + 'A' * 12 + '.' * 32),
        ('node@lvm#lvm', 'B' * 12 + '.' * 36),
        ('', '.' * 8 + 'C' * 16 + '.' * 24),
        ('', '.' * 10 + 'B' * 2 + '.' * 36),
        ('node@nfs#nfs', '.' * 48)]
    text = out.replace('\n   ', ' ')
    assert 'A  gold (L1) 2090-01-01 02:00 -> 2090-01-01 08:00, 40 GB' in text
    assert 'B  data (L2) 2090-01-01 00:00 -> 2090-01-01 06:00, 35 GB' in text
    assert 'C  lease L3 (another project), 60 GB' in text
    # 30 + 60 + 5 held at once on lvm from 05:00 to 06:00
    assert ('Held at most: node@ceph#ceph 40 of 50 GB; node@lvm#lvm 95 of '
            '100 GB; node@nfs#nfs 0 of 10 GB') in ' '.join(
                line.strip() for line in lines)
    assert 'Free:' not in out
    assert app.client.volume_pools.calls[0] == ('allocations', (), {})
    assert app.client.leases.calls == [('list', (), {
        'time_from': '2090-01-01T00:00:00',
        'time_to': '2090-01-02T00:00:00'})]


def test_only_the_pools_asked_for_in_that_order():
    _, out = run_calendar('--start', iso(0)[:16], '--end', iso(24)[:16],
                          '--pool', 'node@nfs#nfs', '--pool', '2')
    assert [label for label, _ in _bars(out)] == ['node@nfs#nfs',
                                                  'node@ceph#ceph']
    assert 'Held at most: node@nfs#nfs 0 of 10 GB; node@ceph#ceph 40 of ' \
        '50 GB' in out


def test_the_most_held_counts_the_range_only():
    _, out = run_calendar('--start', iso(7)[:16], '--end', iso(10)[:16])
    assert 'node@ceph#ceph 40 of 50 GB; node@lvm#lvm 60 of 100 GB' in \
        out.replace('\n              ', ' ')


def test_an_unknown_pool_is_said():
    with pytest.raises(climate_client.NotFound):
        run_calendar('--pool', 'nowhere')


def test_a_range_backwards_is_refused():
    with pytest.raises(parsing.BadArgument) as info:
        run_calendar('--start', iso(5)[:16], '--end', iso(1)[:16])
    assert str(info.value) == '--end must be later than --start'


# -- the timeline's lanes and notes ------------------------------------------

def test_lanes_hold_the_bars_without_overlap():
    a, b, c, d = (tl.Bar(h(0), h(4), 'a'), tl.Bar(h(2), h(6), 'b'),
                  tl.Bar(h(4), h(8), 'c'), tl.Bar(h(3), h(5), 'd'))
    assert tl.lanes([c, b, a, d]) == [[a, c], [b], [d]]
    assert tl.lanes([]) == [[]]
    # a bar starting when another ends goes after it
    assert tl.lanes([tl.Bar(h(1), h(2), 'x'), tl.Bar(h(0), h(1), 'y')]) == [
        [tl.Bar(h(0), h(1), 'y'), tl.Bar(h(1), h(2), 'x')]]


def test_notes_are_wrapped_after_the_legend():
    out = tl.render([tl.Row('pool', [tl.Bar(h(1), h(2), 'k')])], h(0),
                    h(24), width=40, legend={'k': 'lease k'},
                    show_free=False,
                    notes=[('Held: ', ['pool-one 10 of 20 GB',
                                       'pool-two 0 of 5 GB'])])
    lines = out.splitlines()
    assert lines[-3:] == ['A  lease k',
                          'Held: pool-one 10 of 20 GB; pool-two 0',
                          '      of 5 GB']
