"""What the commands share: the client, display of nested values, dates."""

import datetime
import json
import logging

from cliff import columns

from climate.cli import client as climate_client
from climate.cli import parsing

LOG = logging.getLogger(__name__)


def client_of(cmd):
    return cmd.app.client


class JsonColumn(columns.FormattableColumn):
    """Nested values: readable lines in a table, themselves in JSON/YAML."""

    def human_readable(self):
        value = self._value
        if isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True)
        return '' if value is None else str(value)

    def machine_readable(self):
        return self._value


def _stack_summary(params):
    """A stack reservation's long fields, short: the template by its
    resources, the needs by the template resources each stands for
    (``-f json`` shows them whole)."""
    out = {}
    template = params.get('template')
    if isinstance(template, dict):
        out['template'] = '<%d resources>' % len(
            template.get('resources') or {})
    if isinstance(params.get('environment'), dict):
        out['environment'] = '<%d sections>' % len(params['environment'])
    if isinstance(params.get('needs'), list):
        out['needs'] = '; '.join(
            '%s %s' % (n.get('resource_type'), '+'.join(
                n.get('resources') or [])) for n in params['needs'])
    for key in ('free', 'unreservable'):
        if isinstance(params.get(key), list):
            out[key] = '+'.join(str(i.get('resource')) for i in params[key])
    return out


class ReservationsColumn(JsonColumn):
    def human_readable(self):
        lines = []
        for res in self._value or []:
            params = {k: v for k, v in res.items() if k not in (
                'id', 'lease_id', 'resource_type', 'status', 'created_at',
                'updated_at', 'resource_id', 'missing_resources',
                'resources_changed')}
            params.update(_stack_summary(params))
            text = '%s %s %s' % (res.get('id'), res.get('resource_type'),
                                 res.get('status'))
            if params:
                text += ' ' + ','.join('%s=%s' % (k, params[k])
                                       for k in sorted(params))
            lines.append(text)
        return '\n'.join(lines)


class EventsColumn(JsonColumn):
    def human_readable(self):
        lines = []
        for ev in self._value or []:
            text = '%s %s %s' % (ev.get('event_type'), short_date(
                ev.get('time')), ev.get('status'))
            if ev.get('last_error'):
                text += ' (%s)' % ev['last_error']
            lines.append(text)
        return '\n'.join(lines)


def delete_each(cmd, kind, refs, manager, label):
    """Delete each of ``refs`` (names or ids), going on after a failure.

    :param label: the text naming a deleted resource, from the resource.
    :raises ClientError: when any was not deleted (exit status 1).
    """
    failed = 0
    for ref in refs:
        try:
            item = manager.find(ref)
            manager.delete(item['id'])
        except climate_client.ClientError as exc:
            failed += 1
            LOG.error('Cannot delete %s %s: %s', kind, ref, exc)
        else:
            cmd.app.stdout.write('Deleted %s %s (%s)\n' % (
                kind, label(item), item['id']))
    if failed:
        raise climate_client.ClientError('%d of %d %s were not deleted.' % (
            failed, len(refs), kind if kind.endswith('s') else kind + 's'))


def short_date(text):
    """``2030-01-31T12:00:00.000000`` as ``2030-01-31 12:00:00``."""
    if not text:
        return text
    return text.replace('T', ' ').split('.')[0]


def api_date(text):
    """A date from the API (naive UTC)."""
    return datetime.datetime.fromisoformat(text.replace('Z', '')).replace(
        tzinfo=None, microsecond=0)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None, microsecond=0)


def show_item(item, fields, formatters=None):
    """(columns, values) of one resource for a ShowOne."""
    formatters = formatters or {}
    names = [f for f in fields if f in item] + sorted(
        k for k in item if k not in fields)
    values = []
    for name in names:
        value = item[name]
        if name in formatters:
            value = formatters[name](value)
        elif isinstance(value, (dict, list)):
            value = JsonColumn(value)
        values.append(value)
    return tuple(names), tuple(values)


def every_field(items, fields):
    """``fields``, then every other field any of ``items`` carries, by
    name (``--long`` of a listing whose items have free-form extras)."""
    cols = list(fields)
    for item in items:
        cols.extend(k for k in sorted(item) if k not in cols)
    return cols


def add_period(parser, start_help, end_help):
    """``--start`` and ``--end`` of a period, as the API takes them (dates
    or ``now``, checked by the server)."""
    parser.add_argument('--start', metavar='<date>', help=start_help)
    parser.add_argument('--end', metavar='<date>', help=end_help)


def list_items(items, fields):
    """(columns, rows) of resources for a Lister."""
    return tuple(fields), [tuple(
        JsonColumn(i.get(f)) if isinstance(i.get(f), (dict, list))
        else i.get(f) for f in fields) for i in items]


def range_from_args(args, default_span):
    """The (start, end) a calendar-like command shows, naive UTC."""
    now = utcnow()
    start = parsing.date(args.start, '--start', now) if args.start else now
    if args.end:
        end = parsing.date(args.end, '--end', now)
    else:
        end = start + default_span
    if end <= start:
        raise parsing.BadArgument('--end must be later than --start')
    return now, start, end
