"""Charts as PNG (matplotlib, the ``plot`` extra): the free-capacity
timeline (:func:`draw`) and the energy saved step by step
(:func:`draw_energy`).

:func:`steps` and :func:`energy_bars` are pure and tested on their own;
the draw functions only feed them to matplotlib's non-interactive Agg
backend.
"""

from climate.cli import common


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def steps(segments):
    """(times, counts) for a post-step plot of ``segments``.

    :param segments: ``[{'start', 'end', 'free'}]`` as the API answers,
        consecutive.
    :returns: the start of each segment plus the end of the last one, and
        the count of each segment repeated for the last point.
    """
    if not segments:
        return [], []
    times = [common.api_date(s['start']) for s in segments]
    times.append(common.api_date(segments[-1]['end']))
    counts = [int(s['free']) for s in segments]
    counts.append(counts[-1])
    return times, counts


def energy_bars(steps):
    """(starts, widths in days, kWh) of the steps of an energy report
    that have figures: the steps after now (``None``) are left out."""
    known = [s for s in steps if s.get('kwh_saved') is not None]
    starts = [common.api_date(s['start']) for s in known]
    widths = [(common.api_date(s['end']) - start).total_seconds() / 86400
              for s, start in zip(known, starts)]
    return starts, widths, [float(s['kwh_saved']) for s in known]


def _pyplot():
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import dates as mdates
        from matplotlib import pyplot
        from matplotlib import ticker
    except ImportError:
        raise PlotUnavailable(
            "--plot needs matplotlib: pip install 'climate[plot]'")
    return mdates, pyplot, ticker


def _finish(fig, ax, mdates, path, title, legend=True, grid_axis='both'):
    """A chart's time axis, title, grid and legend, then the file."""
    ax.set_xlabel('time (UTC)')
    ax.set_title(title)
    ax.xaxis.set_major_formatter(mdates.DateFormatter('%m-%d %H:%M'))
    fig.autofmt_xdate()
    ax.grid(True, axis=grid_axis, alpha=0.3)
    if legend:
        ax.legend(loc='upper right')
    fig.tight_layout()
    fig.savefig(path)


def draw_energy(path, steps, title='Energy saved'):
    """Write the kWh saved step by step to ``path`` as a bar chart."""
    mdates, pyplot, _ticker = _pyplot()
    starts, widths, kwh = energy_bars(steps)
    fig, ax = pyplot.subplots(figsize=(10, 4), dpi=100)
    try:
        if starts:
            ax.bar(starts, kwh, width=widths, align='edge',
                   color='tab:green', alpha=0.7, edgecolor='tab:green',
                   label='kWh saved')
        ax.set_ylim(0, max(kwh + [0.0]) * 1.1 + 0.1)
        ax.set_ylabel('kWh saved per step')
        _finish(fig, ax, mdates, path, title, legend=bool(starts),
                grid_axis='y')
    finally:
        pyplot.close(fig)
    return path


def draw(path, segments, matching_hosts, count=None, windows=(),
         title='Free hosts'):
    """Write the chart to ``path`` (the format follows its extension).

    :param count: the number of hosts asked for, drawn as a line.
    :param windows: ``[{'start', 'end'}]`` found by the search, shaded.
    """
    mdates, pyplot, ticker = _pyplot()
    times, counts = steps(segments)
    fig, ax = pyplot.subplots(figsize=(10, 4), dpi=100)
    try:
        if times:
            ax.step(times, counts, where='post', color='tab:blue',
                    label='free matching hosts')
            ax.fill_between(times, counts, step='post', alpha=0.2,
                            color='tab:blue')
        for index, window in enumerate(windows):
            ax.axvspan(common.api_date(window['start']),
                       common.api_date(window['end']), color='tab:green',
                       alpha=0.25,
                       label='windows found' if index == 0 else None)
        if count is not None:
            ax.axhline(count, color='tab:red', linestyle='--',
                       label='hosts asked for (%d)' % count)
        ax.set_ylim(0, max([matching_hosts, count or 0] + counts) + 1)
        ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_ylabel('hosts (of %d matching)' % matching_hosts)
        _finish(fig, ax, mdates, path, title)
    finally:
        pyplot.close(fig)
    return path
