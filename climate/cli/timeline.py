"""Text Gantt charts: rows (hosts) across time, one letter per holder.

Pure functions of their arguments (no I/O, no clock): the commands fetch
the data and pass ``now``.  Every line fits in ``width`` columns::

    Hosts x time (UTC), 2030-01-01 00:00 -> 2030-01-02 00:00, 1 col = 20m
                  2030-01-01
                  00:00      04:00      08:00      12:00      16:00   ...
    compute1     |AAAAAAAAAAAAAAA.............................BBBBBBB...|
    compute2     |..............................................BBBBBBB|
                                      ^ now
    A  training (4b1e...) 2030-01-01 00:00 -> 2030-01-01 05:00
    B  batch    (9c2d...) 2030-01-01 15:00 -> 2030-01-02 03:00
    Free: compute1 05:00-15:00; compute2 00:00-15:00

A cell shows the holder covering most of its time slice; any overlap at
all counts, so a short hold never disappears.  '.' is free.
"""

import collections
import datetime
import textwrap

Bar = collections.namedtuple('Bar', 'start end key')
Row = collections.namedtuple('Row', 'label bars')

FREE = '.'
OVERFLOW = '#'
GLYPHS = ('ABCDEFGHIJKLMNOPQRSTUVWXYZ'
          'abcdefghijklmnopqrstuvwxyz0123456789')
MIN_WIDTH = 40
MAX_LABEL = 16

# round column widths and tick spacings, smallest first: a column is one
# of these, and ticks fall on column boundaries
_STEPS = [datetime.timedelta(minutes=m) for m in (
    1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440, 2880,
    4320, 10080, 20160, 40320, 80640, 161280)]


def glyphs_for(keys):
    """A letter per distinct key, in order of first appearance."""
    out = {}
    for key in keys:
        if key not in out:
            out[key] = GLYPHS[len(out)] if len(out) < len(GLYPHS) \
                else OVERFLOW
    return out


def free_windows(bars, start, end):
    """The parts of [start, end) no bar covers, in order."""
    windows = []
    cursor = start
    for bar in sorted(bars, key=lambda b: b.start):
        if bar.end <= cursor or bar.start >= end:
            continue
        if bar.start > cursor:
            windows.append((cursor, bar.start))
        cursor = max(cursor, bar.end)
        if cursor >= end:
            break
    if cursor < end:
        windows.append((cursor, end))
    return windows


def _cells(bars, start, step, count, glyphs):
    line = []
    for index in range(count):
        lo = start + step * index
        hi = lo + step
        best, best_overlap = None, datetime.timedelta(0)
        for bar in bars:
            overlap = min(hi, bar.end) - max(lo, bar.start)
            if overlap > best_overlap:
                best, best_overlap = bar, overlap
        line.append(glyphs[best.key] if best is not None else FREE)
    return ''.join(line)


def _floor_to(when, step):
    epoch = datetime.datetime(1970, 1, 1)
    return epoch + step * ((when - epoch) // step)


def _span_text(delta):
    seconds = int(delta.total_seconds())
    for unit, size in (('d', 86400), ('h', 3600), ('m', 60)):
        if seconds >= size and seconds % size == 0:
            return '%d%s' % (seconds // size, unit)
    if seconds >= 60:
        return '%dm%02ds' % divmod(seconds, 60)
    return '%ds' % max(seconds, 1)


def _put(line, column, text):
    """Write text into a list of characters if it fits and the room is
    blank (a label never overwrites another)."""
    end = column + len(text)
    if column < 0 or end > len(line):
        return False
    if any(c != ' ' for c in line[max(0, column - 1):min(len(line), end + 1)]):
        return False
    line[column:end] = list(text)
    return True


def _axis(start, step, count, offset, width):
    """Two header lines: dates, then ticks (times or days)."""
    span = step * count
    end = start + span
    if span <= datetime.timedelta(days=2):
        tick_format = '%H:%M'
    elif start.year == (end - step).year:
        tick_format = '%m-%d'
    else:
        tick_format = '%Y-%m-%d'
    daily = tick_format != '%H:%M'
    min_cells = len(start.strftime(tick_format)) + 2
    day = datetime.timedelta(days=1)
    tick = next((s for s in _STEPS if s >= step * min_cells and
                 s % step == datetime.timedelta(0) and
                 (not daily or s % day == datetime.timedelta(0))),
                step * min_cells)
    dates_line = [' '] * width
    ticks_line = [' '] * width
    t = _floor_to(start, tick)
    if t < start:
        t += tick
    last_day = None
    while t < start + span:
        col = offset + int((t - start) / step)
        label = t.strftime(tick_format)
        if _put(ticks_line, col, label) and not daily:
            if t.date() != last_day:
                if _put(dates_line, col, t.strftime('%Y-%m-%d')):
                    last_day = t.date()
        t += tick
    if daily and tick_format == '%m-%d':
        _put(dates_line, offset, start.strftime('%Y'))
    elif not daily and last_day is None:
        _put(dates_line, offset, start.strftime('%Y-%m-%d'))
    return ''.join(dates_line).rstrip(), ''.join(ticks_line).rstrip()


def _fmt(when, start, end, edge_start='start', edge_end='end'):
    if when <= start:
        return edge_start
    if when >= end:
        return edge_end
    if start.date() == (end - datetime.timedelta(seconds=1)).date():
        return when.strftime('%H:%M')
    return when.strftime('%m-%d %H:%M')


def _window(lo, hi, start, end):
    lo, hi = _fmt(lo, start, end), _fmt(hi, start, end)
    return '%s %s %s' % (lo, '->', hi) if ' ' in lo + hi else \
        '%s-%s' % (lo, hi)


def _wrap(prefix, items, width, sep='; '):
    """Items joined by ``sep`` after ``prefix``, wrapped on spaces, the
    following lines indented under the first item."""
    return textwrap.wrap(prefix + sep.join(items), width=width,
                         subsequent_indent=' ' * len(prefix),
                         break_on_hyphens=False) or [prefix.rstrip()]


def lanes(bars):
    """The bars in as few lists as hold them without overlap (a pool's
    holdings, drawn as one line each): each bar, by start, in the first
    list whose last bar has ended by then."""
    out = []
    for bar in sorted(bars, key=lambda b: (b.start, b.end)):
        for lane in out:
            if lane[-1].end <= bar.start:
                lane.append(bar)
                break
        else:
            out.append([bar])
    return out or [[]]


def render(rows, start, end, width=80, now=None, legend=None,
           title='Hosts x time (UTC)', show_free=True, notes=()):
    """The chart as text, lines of at most ``width`` characters.

    :param rows: list of :class:`Row` (label, list of :class:`Bar`); bars
        may extend past the range, they are clipped.
    :param start, end: the range shown (naive UTC datetimes).
    :param now: draws a ``^ now`` marker under the rows when in range.
    :param legend: {key: text} describing each holder; keys without text
        are shown as they are.
    :param show_free: list each row's free windows under the legend.
    :param notes: ``(prefix, [item])`` pairs, each a paragraph after
        the rest, items joined by ``; `` and wrapped under the first.
    """
    if end <= start:
        raise ValueError('the end of the range must be after its start')
    width = max(int(width), MIN_WIDTH)
    legend = legend or {}
    label_len = min(MAX_LABEL, max([len(r.label) for r in rows] + [4]))
    offset = label_len + 2
    room = width - offset - 1
    # the first column starts on a multiple of the step, so the range
    # must fit once floored
    step = next((s for s in _STEPS
                 if s * room >= end - _floor_to(start, s)), None)
    if step is None:
        step = _STEPS[-1] * (-(-(end - start) // (_STEPS[-1] * room)) + 1)
    start = _floor_to(start, step)
    count = -(-(end - start) // step)
    end = start + step * count
    visible = [[b for b in row.bars if b.end > start and b.start < end]
               for row in rows]
    glyphs = glyphs_for(b.key for bars in visible
                        for b in sorted(bars, key=lambda b: b.start))

    heading = '%s, %s -> %s' % (title, start.strftime('%Y-%m-%d %H:%M'),
                                 end.strftime('%Y-%m-%d %H:%M'))
    scale = '1 column = %s' % _span_text(step)
    if len(heading) + 2 + len(scale) <= width:
        out = ['%s, %s' % (heading, scale)]
    else:
        out = [heading[:width], scale]
    dates_line, ticks_line = _axis(start, step, count, offset, width)
    out.extend([dates_line, ticks_line])
    if not rows:
        out.append('(nothing to show)')
    for row, bars in zip(rows, visible):
        label = row.label if len(row.label) <= label_len else \
            row.label[:label_len - 1] + '~'
        out.append('%-*s |%s|' % (label_len, label,
                                  _cells(bars, start, step, count, glyphs)))
    if now is not None and start <= now < end:
        col = offset + int((now - start) / step)
        marker = '^ now' if col + 5 <= width else 'now ^'
        if marker[0] != '^':
            col -= 4
        out.append(' ' * col + marker)
    for key, glyph in glyphs.items():
        out.extend(_wrap('%s  ' % glyph, [legend.get(key, str(key))], width))
    if show_free and rows:
        items = []
        for row, bars in zip(rows, visible):
            windows = free_windows(bars, start, end)
            if not windows:
                text = 'none'
            elif windows == [(start, end)]:
                text = 'all'
            else:
                text = ', '.join(_window(s, e, start, end)
                                 for s, e in windows)
            items.append('%s %s' % (row.label, text))
        out.extend(_wrap('Free: ', items, width))
    for prefix, items in notes:
        out.extend(_wrap(prefix, items, width))
    return '\n'.join(line.rstrip() for line in out) + '\n'
