from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import messages
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display
from climate.dashboard import policy
from climate import states

#: the page's query parameters of the API's 1.1 pagination
MARKER = 'marker'
PREV_MARKER = 'prev_marker'

#: Horizon's meaning of each status: True settled, False failed, None on
#: its way (the row is read again until it settles).  A lease waiting for
#: its start or for capacity is settled: it may wait for days; so is a
#: hold, which waits for its user's confirm.
STATUS_CHOICES = (
    ('ACTIVE', True), ('PENDING', True), ('INACTIVE', True),
    ('WAITING', True), ('TERMINATED', True), ('HELD', True),
    ('EXPIRED', True),
    ('IN_PROGRESS', None), ('STARTING', None), ('UPDATING', None),
    ('TERMINATING', None),
    ('EXHAUSTED', False), ('TIMEDOUT', False), ('ERROR', False),
)
STATUS_DISPLAY = (
    ('ACTIVE', _('Active')), ('PENDING', _('Pending')),
    ('INACTIVE', _('Not started')), ('WAITING', _('Waiting for capacity')),
    ('IN_PROGRESS', _('Looking for hosts')), ('STARTING', _('Starting')),
    ('UPDATING', _('Updating')), ('TERMINATING', _('Ending')),
    ('TERMINATED', _('Ended')), ('EXHAUSTED', _('Out of retries')),
    ('TIMEDOUT', _('Timed out')), ('ERROR', _('Error')),
    ('HELD', _('Held, to confirm')), ('EXPIRED', _('Hold expired')),
)
LEASE_TYPE_DISPLAY = (
    ('immediate', _('Immediate')), ('scheduled', _('Scheduled')),
    ('with_retries', _('With retries')), ('best_effort', _('Best effort')),
)


class CreateLease(tables.LinkAction):
    name = 'create'
    verbose_name = _('Create Lease')
    url = 'horizon:project:leases:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.LEASE_CREATE


class LeaseTimeline(tables.LinkAction):
    name = 'timeline'
    verbose_name = _('Timeline')
    url = 'horizon:project:leases:timeline'
    icon = 'calendar'
    policy_rules = policy.LEASE_LIST


class UpdateLease(tables.LinkAction):
    name = 'update'
    verbose_name = _('Update Lease')
    url = 'horizon:project:leases:update'
    classes = ('ajax-modal',)
    icon = 'pencil'
    policy_rules = policy.LEASE_UPDATE

    def allowed(self, request, lease=None):
        # the API refuses a change to a lease that ended or is busy
        return lease is None or lease.status in states.LEASE_UPDATABLE


class DeleteLease(tables.DeleteAction):
    policy_rules = policy.LEASE_DELETE

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Lease', 'Delete Leases', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Lease', 'Deleted Leases', count)

    def delete(self, request, obj_id):
        try:
            climate_api.lease_delete(request, obj_id)
        except climate_api.ReservationError as exc:
            # Horizon's own message names the lease, not the reason
            messages.error(request, exc.message)
            raise


class ConfirmLease(tables.BatchAction):
    """A temporary hold becomes its lease (only a HELD lease offers it)."""
    name = 'confirm'
    policy_rules = policy.LEASE_CONFIRM

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Confirm Hold', 'Confirm Holds', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Confirmed Hold', 'Confirmed Holds', count)

    def allowed(self, request, lease=None):
        return lease is None or lease.status == states.HELD

    def action(self, request, obj_id):
        try:
            climate_api.lease_confirm(request, obj_id)
        except climate_api.ReservationError as exc:
            # the API's reason (expired, not held), not Horizon's sentence
            messages.error(request, exc.message)
            raise


class LeaseFilter(tables.FilterAction):
    # the API filters (and pages) the listing itself
    filter_type = 'server'
    filter_choices = (('name', _('Name ='), True),
                      ('status', _('Status ='), True))


def _types(lease):
    return ', '.join(lease.resource_types) or display.MISSING


def _start(lease):
    return display.short_date(lease.start_date)


def _end(lease):
    return display.short_date(lease.end_date)


class UpdateLeaseRow(tables.Row):
    """A row read again while its lease starts, changes or ends."""
    ajax = True

    def get_data(self, request, lease_id):
        return climate_api.lease_get(request, lease_id)


class LeasesTable(tables.DataTable):
    name = tables.WrappingColumn(
        'name', verbose_name=_('Name'),
        link='horizon:project:leases:detail')
    status = tables.Column(
        'status', verbose_name=_('Status'), status=True,
        status_choices=STATUS_CHOICES, display_choices=STATUS_DISPLAY)
    lease_type = tables.Column(
        'lease_type', verbose_name=_('Lease type'),
        display_choices=LEASE_TYPE_DISPLAY, empty_value=_('Default'))
    resources = tables.Column(_types, verbose_name=_('Resources'))
    start = tables.Column(_start, verbose_name=_('Start'))
    end = tables.Column(_end, verbose_name=_('End'))

    class Meta(object):
        name = 'leases'
        verbose_name = _('Leases')
        pagination_param = MARKER
        prev_pagination_param = PREV_MARKER
        status_columns = ('status',)
        row_class = UpdateLeaseRow
        table_actions = (LeaseFilter, LeaseTimeline, CreateLease,
                         DeleteLease)
        row_actions = (ConfirmLease, UpdateLease, DeleteLease)


class ReservationsTable(tables.DataTable):
    """A lease's reservations on its detail page."""
    resource_type = tables.Column('resource_type',
                                  verbose_name=_('Resource type'))
    status = tables.Column('status', verbose_name=_('Status'))
    parameters = tables.Column('parameters', verbose_name=_('Parameters'))

    class Meta(object):
        name = 'reservations'
        verbose_name = _('Reservations')


class EventsTable(tables.DataTable):
    """A lease's events on its detail page."""
    event_type = tables.Column('event_type', verbose_name=_('Event'))
    time = tables.Column('time', verbose_name=_('Time'))
    status = tables.Column('status', verbose_name=_('Status'))

    class Meta(object):
        name = 'events'
        verbose_name = _('Events')


def detail_url(lease_id):
    return reverse('horizon:project:leases:detail', args=[lease_id])
