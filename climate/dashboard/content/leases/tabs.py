from django.utils.translation import gettext_lazy as _
from horizon import tabs

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.leases import tables as lease_tables
from climate.dashboard import display

#: what a reservation row shows apart from its parameters
RESERVATION_COLUMNS = ('id', 'resource_type', 'status', 'lease_id',
                       'created_at', 'updated_at')


def reservation_rows(lease):
    """The reservations of ``lease`` as table rows, their parameters
    (min, max, filters...) as one ``key=value`` text."""
    rows = []
    for res in lease.reservations or []:
        params = ', '.join(
            '%s=%s' % (key, value) for key, value in sorted(res.items())
            if key not in RESERVATION_COLUMNS and value not in (None, ''))
        rows.append(climate_api.Row(res.get('id'), {
            'resource_type': res.get('resource_type'),
            'status': res.get('status'),
            'parameters': params or display.MISSING}))
    return rows


def event_rows(lease):
    """The events of ``lease`` in time order."""
    events = sorted(lease.events or [], key=lambda e: e.get('time') or '')
    return [climate_api.Row(e.get('id'), {
        'event_type': e.get('event_type'),
        'time': display.short_date(e.get('time')),
        'status': e.get('status')}) for e in events]


class OverviewTab(tabs.Tab):
    name = _('Overview')
    slug = 'overview'
    template_name = 'project/leases/_detail_overview.html'

    def get_context_data(self, request):
        lease = self.tab_group.kwargs['lease']
        return {'lease': lease,
                'start': display.short_date(lease.start_date),
                'end': display.short_date(lease.end_date),
                'next_attempt': display.short_date(lease.next_attempt_at),
                'status_display': dict(lease_tables.STATUS_DISPLAY).get(
                    lease.status, lease.status)}


class ReservationsTab(tabs.TableTab):
    name = _('Reservations and events')
    slug = 'reservations'
    table_classes = (lease_tables.ReservationsTable,
                     lease_tables.EventsTable)
    template_name = 'project/leases/_detail_reservations.html'
    # both tables come from the lease already read: nothing to wait for
    preload = True

    def get_reservations_data(self):
        return reservation_rows(self.tab_group.kwargs['lease'])

    def get_events_data(self):
        return event_rows(self.tab_group.kwargs['lease'])


class LeaseDetailTabs(tabs.DetailTabsGroup):
    slug = 'lease_details'
    tabs = (OverviewTab, ReservationsTab)
