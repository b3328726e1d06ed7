import datetime

from django.utils.translation import gettext_lazy as _
from horizon import tables

from climate.dashboard.content.leases import bodies
from climate.dashboard.content.leases import links
from climate.dashboard import display
from climate.dashboard import policy
from climate.dashboard import validation


def prefill_url(window):
    """The lease create form, filled in for ``window``: its start, the
    hosts and the length asked, and the same filters."""
    start = datetime.datetime.fromisoformat(window.start.rstrip('Zz'))
    query = window.query
    end = start + validation.duration(query['duration'])
    params = {'start_date': display.api_date(start),
              'end_date': display.api_date(end),
              'resource_type': bodies.HOST,
              'min_hosts': query['count'], 'max_hosts': query['count']}
    for key in ('hypervisor_properties', 'resource_properties'):
        if query.get(key):
            params[key] = query[key]
    return links.create_url(params)


class BookWindow(tables.LinkAction):
    name = 'book'
    verbose_name = _('Book this window')
    classes = ('ajax-modal', 'btn-primary')
    icon = 'calendar'
    policy_rules = policy.LEASE_CREATE

    def get_link_url(self, datum=None):
        return prefill_url(datum)


def _start(window):
    return display.short_date(window.start)


def _end(window):
    return display.short_date(window.end)


def _latest_start(window):
    return display.short_date(window.latest_start)


class WindowsTable(tables.DataTable):
    start = tables.Column(_start, verbose_name=_('Free from'))
    end = tables.Column(_end, verbose_name=_('Free until'))
    latest_start = tables.Column(_latest_start,
                                 verbose_name=_('Latest start'))
    hosts_free = tables.Column('hosts_free', verbose_name=_('Hosts free'))

    class Meta(object):
        name = 'windows'
        verbose_name = _('Earliest windows')
        row_actions = (BookWindow,)
        footer = False
