"""The free-capacity plot (matplotlib, the "plot" extra)."""

import datetime
import struct

from climate.cli import plot

SEGMENTS = [
    {'start': '2030-01-01T00:00:00.000000', 'end': '2030-01-01T06:00:00',
     'free': 1},
    {'start': '2030-01-01T06:00:00.000000', 'end': '2030-01-02T00:00:00',
     'free': 3},
]


def test_steps():
    times, counts = plot.steps(SEGMENTS)
    assert times == [datetime.datetime(2030, 1, 1),
                     datetime.datetime(2030, 1, 1, 6),
                     datetime.datetime(2030, 1, 2)]
    assert counts == [1, 3, 3]
    assert plot.steps([]) == ([], [])


def test_draw_writes_a_png(tmp_path):
    path = tmp_path / 'free.png'
    plot.draw(str(path), SEGMENTS, matching_hosts=3, count=2,
              windows=[{'start': '2030-01-01T06:00:00',
                        'end': '2030-01-01T10:00:00'}])
    data = path.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    assert struct.unpack('>II', data[16:24]) == (1000, 400)
    assert len(data) > 10000  # a drawing, not an empty canvas


ENERGY_STEPS = [
    {'start': '2030-01-01T00:00:00.000000', 'end': '2030-01-01T12:00:00',
     'hours_off': 4.0, 'kwh_saved': 0.6},
    {'start': '2030-01-01T12:00:00.000000', 'end': '2030-01-02T00:00:00',
     'hours_off': 1.0, 'kwh_saved': 0.15},
    # after now: no figures yet
    {'start': '2030-01-02T00:00:00.000000', 'end': '2030-01-02T12:00:00',
     'hours_off': None, 'kwh_saved': None},
]


def test_energy_bars_leave_out_the_steps_not_known_yet():
    starts, widths, kwh = plot.energy_bars(ENERGY_STEPS)
    assert starts == [datetime.datetime(2030, 1, 1),
                      datetime.datetime(2030, 1, 1, 12)]
    assert widths == [0.5, 0.5]
    assert kwh == [0.6, 0.15]
    assert plot.energy_bars([]) == ([], [], [])


def test_draw_energy_writes_a_png(tmp_path):
    path = tmp_path / 'energy.png'
    plot.draw_energy(str(path), ENERGY_STEPS)
    data = path.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    assert struct.unpack('>II', data[16:24]) == (1000, 400)
    assert len(data) > 10000
    # an empty report still draws its axes
    plot.draw_energy(str(path), [])
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
