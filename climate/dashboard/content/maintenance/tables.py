from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import messages
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display
from climate.dashboard import policy

APPLIED = 'APPLIED'
STATUS_DISPLAY = (('APPLIED', _('In force')), ('CANCELLED', _('Cancelled')))


class PlanMaintenance(tables.LinkAction):
    name = 'plan'
    verbose_name = _('Plan Maintenance')
    url = 'horizon:admin:reservation_maintenance:plan'
    icon = 'plus'
    policy_rules = policy.MAINTENANCE_CREATE


class CancelWindow(tables.DeleteAction):
    name = 'cancel'
    policy_rules = policy.MAINTENANCE_DELETE
    help_text = _('Its hosts are free again; what it did to other leases '
                  'stays.')

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Cancel Maintenance Window',
                             'Cancel Maintenance Windows', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Cancelled Maintenance Window',
                             'Cancelled Maintenance Windows', count)

    def allowed(self, request, window=None):
        return window is None or window.status == APPLIED

    def delete(self, request, obj_id):
        try:
            climate_api.maintenance_delete(request, obj_id)
        except climate_api.ReservationError as exc:
            messages.error(request, exc.message)
            raise


class WindowsTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Name'))
    reason = tables.Column('reason', verbose_name=_('Reason'),
                           empty_value='-')
    start_date = tables.Column('start_date', verbose_name=_('Start'),
                               filters=(display.short_date,))
    end_date = tables.Column('end_date', verbose_name=_('End'),
                             filters=(display.short_date,))
    hosts = tables.Column('host_names', verbose_name=_('Hosts'))
    hits = tables.Column('hit_count', verbose_name=_('Leases changed'))
    status = tables.Column('status', verbose_name=_('Status'),
                           display_choices=STATUS_DISPLAY)

    class Meta(object):
        name = 'windows'
        verbose_name = _('Maintenance windows')
        table_actions = (PlanMaintenance, CancelWindow)
        row_actions = (CancelWindow,)

    def get_object_display(self, datum):
        return datum.name
