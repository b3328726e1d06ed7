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
