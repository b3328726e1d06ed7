"""What ``GET /v1/os-hosts/power`` and ``GET /v1/os-hosts/{id}/power``
answer (microversion 1.12, the measured watts 1.13; administrators;
doc/source/energy.rst).

The list is every host with the power state the planner
(``climate.manager.workers.power``) keeps for it: since when, its measured
boot, the booking start a waking host must be up by, and the last power
action that failed.  A host the planner never looked at is ``unknown``
since nothing: the planner is off (``[power] enabled``), or the host came
after its last pass.

One host adds its history over a period (``start``, ``end``: the last 7
days by default), each interval cut to the period and to now, and what the
off intervals saved: host-hours off and kWh at the host's idle watts.

A host's idle watts are the reading its power switch gave just before
the planner last powered it off (``idle_watts``, ``watts_at``: a switch
that measures power, Redfish), else ``[power] idle_watts``; each figure
says which (``watts_source``: ``measured`` or ``configured``).  The views
here are those of the latest microversion (1.13); the API drops what an
older one does not show.

The energy report (``GET /v1/usage/energy``) adds that up for every host
over a period (``start``, ``end``: this month, as ``/v1/usage``), step by
step (``step``), and per host.
"""

import datetime

from oslo_config import cfg

from climate import dates
from climate.db import hosts as db_hosts
from climate.db import power as db_power
from climate.manager import usage
from climate.scheduling import power as power_plan

CONF = cfg.CONF

PARAMS = ('start', 'end')
ENERGY_PARAMS = ('start', 'end', 'step')
DEFAULT_PERIOD = datetime.timedelta(days=7)
MEASURED = 'measured'
CONFIGURED = 'configured'


def state_view(row, record):
    """The API's view of host ``row``'s power :data:`db_power.Record`
    (None: never seen by the planner)."""
    view = {'host_id': str(row.id),
            'hypervisor_hostname': row.hypervisor_hostname}
    if record is None:
        view.update(state=db_power.UNKNOWN, since=None, boot_seconds=None,
                    need_at=None, last_error=None, error_at=None,
                    idle_watts=None, watts_at=None)
        return view
    view.update(state=record.state, since=dates.format(record.since),
                boot_seconds=record.boot_seconds,
                need_at=dates.format(record.need_at),
                last_error=record.last_error,
                error_at=dates.format(record.error_at),
                idle_watts=record.idle_watts,
                watts_at=dates.format(record.watts_at))
    return view


def watts_of(measured):
    """``(watts, source)`` a host's energy figures count: its measured
    idle draw (None: never read), else ``[power] idle_watts``."""
    if measured is None:
        return CONF.power.idle_watts, CONFIGURED
    return measured, MEASURED


def power_list(ctx):
    """Every host's :func:`state_view`, by id."""
    held = db_power.records(ctx)
    return [state_view(row, held.get(row.id))
            for row, _caps in db_hosts.host_list(ctx)]


def power_get(ctx, host_id, query):
    """One host's :func:`state_view` with its ``history`` and ``energy``
    over the query's period.

    :raises HostNotFound: no such host (404).
    :raises InvalidInput: an unknown parameter, a bad date, an end not
        after the start (400).
    """
    usage.refuse_unknown(query, PARAMS)
    now = dates.utcnow()
    start, end = usage.period(query, now, (now - DEFAULT_PERIOD, now))
    row = db_hosts.host_row(ctx, host_id)
    record = db_power.record(ctx, row.id)
    view = state_view(row, record)
    watts, source = watts_of(record.idle_watts if record else None)
    # what is past: the future has no history yet
    until = max(start, min(end, now))
    history = [entry for entry in db_power.history(ctx, row.id, start, until)
               if entry[2] > entry[1]]
    off = [(began, ended) for state, began, ended in history
           if state == db_power.OFF]
    saved = power_plan.tally({row.id: off}, start, until, watts)
    view.update(start=dates.format(start), end=dates.format(end),
                history=[{'state': state, 'start': dates.format(began),
                          'end': dates.format(ended)}
                         for state, began, ended in history],
                energy=dict(_figures(saved), idle_watts=watts,
                            watts_source=source))
    return view


def _figures(saved):
    return {'hours_off': round(saved.host_hours_off, 3),
            'kwh_saved': round(saved.kwh_saved, 3)}


def energy_report(ctx, query):
    """What powering hosts off saved over the query's period: in all,
    step by step, and per host (the hosts that were off at some time of
    it, most saved first).  Only the past counts: a step after now has
    no figures (``None``), one across now is counted up to now.

    :raises InvalidInput: an unknown parameter, a bad date or step, an end
        not after the start (400).
    """
    usage.refuse_unknown(query, ENERGY_PARAMS)
    now = dates.utcnow()
    start, end = usage.period(query, now, usage.month_of(now))
    step, windows = usage.step_windows(query, start, end)
    until = max(start, min(end, now))
    off = db_power.intervals(ctx, db_power.OFF, start, until)
    measured = db_power.idle_watts(ctx)
    # a host deleted since keeps its history, not its reading
    counted = {host_id: watts_of(measured.get(host_id)) for host_id in off}
    watts = {host_id: pair[0] for host_id, pair in counted.items()}
    past = [(began, min(ended, now)) for began, ended in windows
            if began < now]
    tallies = power_plan.tally_steps(off, past, watts)
    steps = []
    for index, (began, ended) in enumerate(windows):
        entry = usage.window(began, ended)
        if index < len(tallies):
            entry.update(_figures(tallies[index]))
        else:
            entry.update(hours_off=None, kwh_saved=None)
        steps.append(entry)
    names = {row.id: row.hypervisor_hostname
             for row in db_hosts.hosts_by_ids(ctx, sorted(off))}
    hosts = [dict(_figures(power_plan.tally({host_id: spans}, start, until,
                                            watts)),
                  host_id=str(host_id),
                  hypervisor_hostname=names.get(host_id),
                  idle_watts=counted[host_id][0],
                  watts_source=counted[host_id][1])
             for host_id, spans in off.items()]
    hosts.sort(key=lambda h: (-h['kwh_saved'], -h['hours_off'],
                              int(h['host_id'])))
    states = db_power.state_counts(ctx)
    answer = usage.window(start, end)
    answer.update(_figures(power_plan.tally(off, start, until, watts)),
                  now=dates.format(now), step=int(step.total_seconds()),
                  idle_watts=CONF.power.idle_watts,
                  hosts_now={state: states.get(state, 0) for state in (
                      db_power.ON, db_power.OFF, db_power.WAKING)},
                  steps=steps, hosts=hosts)
    return answer
