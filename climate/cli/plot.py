"""The free-capacity timeline as a PNG (matplotlib, the ``plot`` extra).

:func:`steps` is pure and tested on its own; :func:`draw` only feeds it to
matplotlib's non-interactive Agg backend.
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


def draw(path, segments, matching_hosts, count=None, windows=(),
         title='Free hosts'):
    """Write the chart to ``path`` (the format follows its extension).

    :param count: the number of hosts asked for, drawn as a line.
    :param windows: ``[{'start', 'end'}]`` found by the search, shaded.
    """
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import dates as mdates
        from matplotlib import pyplot
        from matplotlib import ticker
    except ImportError:
        raise PlotUnavailable(
            "--plot needs matplotlib: pip install 'climate[plot]'")
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
        ax.set_xlabel('time (UTC)')
        ax.set_title(title)
        ax.xaxis.set_major_formatter(mdates.DateFormatter('%m-%d %H:%M'))
        fig.autofmt_xdate()
        ax.grid(True, alpha=0.3)
        ax.legend(loc='upper right')
        fig.tight_layout()
        fig.savefig(path)
    finally:
        pyplot.close(fig)
    return path
