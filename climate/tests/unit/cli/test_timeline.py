"""The text Gantt chart: a pure function of rows, range, width and now."""

import datetime

import pytest

from climate.cli import timeline as tl

T0 = datetime.datetime(2030, 1, 1)


def h(hours):
    return T0 + datetime.timedelta(hours=hours)


def _bars(text):
    return {line.split(' ', 1)[0]: line[line.index('|') + 1:-1]
            for line in text.splitlines() if '|' in line}


def test_day_at_half_hour_columns():
    rows = [tl.Row('compute1', [tl.Bar(h(-2), h(5), 'L1'),
                                tl.Bar(h(15), h(27), 'L2')]),
            tl.Row('compute2', [tl.Bar(h(15), h(27), 'L2')]),
            tl.Row('compute3', [])]
    out = tl.render(rows, h(0), h(24), now=h(9.5),
                    legend={'L1': 'train (1111) ...', 'L2': 'batch (2222)'})
    lines = out.splitlines()
    assert lines[0] == ('Hosts x time (UTC), 2030-01-01 00:00 -> '
                        '2030-01-02 00:00, 1 column = 30m')
    assert lines[1].split() == ['2030-01-01']
    assert lines[2].split() == ['00:00', '04:00', '08:00', '12:00', '16:00',
                                '20:00']
    assert _bars(out) == {
        'compute1': 'A' * 10 + '.' * 20 + 'B' * 18,
        'compute2': '.' * 30 + 'B' * 18,
        'compute3': '.' * 48,
    }
    # the ticks sit on their columns: 04:00 is column 8 of the bars
    offset = lines[3].index('|') + 1
    assert lines[2].index('04:00') == offset + 8
    now_line = next(line for line in lines if '^ now' in line)
    assert now_line.index('^') == offset + 19
    assert 'A  train (1111) ...' in lines
    assert 'B  batch (2222)' in lines
    assert lines[-1] == (
        'Free: compute1 05:00-15:00; compute2 start-15:00; compute3 all')
    assert all(len(line) <= 80 for line in lines)


def test_every_line_fits_the_width():
    long = tl.Row('a-very-long-hostname-that-goes-on.example.org',
                  [tl.Bar(h(1), h(2), 'x' * 100)])
    for width in (40, 60, 80, 120):
        for span in (0.1, 3, 24, 24 * 9, 24 * 400):
            out = tl.render([long, tl.Row('b', [])], h(0), h(span),
                            width=width, now=h(span / 2),
                            legend={'x' * 100: 'y ' * 80})
            assert max(len(line) for line in out.splitlines()) <= width, (
                width, span, out)


def test_label_truncated_and_short_hold_visible():
    row = tl.Row('a-very-long-hostname', [tl.Bar(h(3), h(3.01), 'k')])
    out = tl.render([row], h(0), h(24))
    label = out.splitlines()[3].split('|')[0].rstrip()
    assert label == 'a-very-long-hos~'
    # 36 seconds in a 30-minute column still shows
    assert _bars(out)['a-very-long-hos~'].count('A') == 1


def test_cell_goes_to_the_longest_holder():
    row = tl.Row('h', [tl.Bar(h(0), h(0.2), 'a'), tl.Bar(h(0.2), h(1), 'b')])
    out = tl.render([row], h(0), h(1), width=40)
    bar = _bars(out)['h']
    # 1 h at 2-minute columns: a holds 6 columns, b the other 24
    assert bar == 'A' * 6 + 'B' * 24


def test_multi_day_ticks_and_free_windows():
    rows = [tl.Row('h1', [tl.Bar(h(24), h(48), 'a')])]
    out = tl.render(rows, h(0), h(24 * 10))
    lines = out.splitlines()
    assert lines[1].strip() == '2030'
    # two-day ticks on even days since the epoch
    assert lines[2].split()[:2] == ['01-02', '01-04']
    assert 'Free: h1 start -> 01-02 00:00, 01-03 00:00 -> end' in out


def test_no_rows_and_bad_range():
    assert '(nothing to show)' in tl.render([], h(0), h(1))
    with pytest.raises(ValueError):
        tl.render([], h(1), h(1))


def test_glyphs_and_overflow():
    keys = ['k%d' % i for i in range(70)] + ['k0']
    glyphs = tl.glyphs_for(keys)
    assert len(glyphs) == 70
    assert glyphs['k0'] == 'A' and glyphs['k26'] == 'a'
    assert glyphs['k61'] == '9' and glyphs['k62'] == tl.OVERFLOW


def test_free_windows():
    bars = [tl.Bar(h(2), h(4), 'a'), tl.Bar(h(3), h(6), 'b'),
            tl.Bar(h(8), h(30), 'c')]
    assert tl.free_windows(bars, h(0), h(24)) == [(h(0), h(2)),
                                                   (h(6), h(8))]
    assert tl.free_windows([], h(0), h(1)) == [(h(0), h(1))]
    assert tl.free_windows([tl.Bar(h(-1), h(2), 'a')], h(0), h(1)) == []
