from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import messages
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard import policy


class CreateHost(tables.LinkAction):
    name = 'create'
    verbose_name = _('Add Host')
    url = 'horizon:admin:reservation_hosts:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.HOST_CREATE


class HostCalendar(tables.LinkAction):
    name = 'calendar'
    verbose_name = _('Calendar')
    url = 'horizon:admin:reservation_hosts:calendar'
    icon = 'calendar'
    policy_rules = policy.HOST_TIMELINE


class DeleteHost(tables.DeleteAction):
    policy_rules = policy.HOST_DELETE

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Host', 'Delete Hosts', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Host', 'Deleted Hosts', count)

    def delete(self, request, obj_id):
        try:
            climate_api.host_delete(request, obj_id)
        except climate_api.ReservationError as exc:
            # a host still reserved is refused: say why
            messages.error(request, exc.message)
            raise


class HostFilter(tables.FilterAction):
    # every host is in the one listing: filtered in the page
    filter_type = 'query'


class HostsTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Host'))
    vcpus = tables.Column('vcpus', verbose_name=_('VCPUs'))
    memory_mb = tables.Column('memory_mb', verbose_name=_('Memory (MB)'))
    local_gb = tables.Column('local_gb', verbose_name=_('Disk (GB)'))
    hypervisor_type = tables.Column('hypervisor_type',
                                    verbose_name=_('Hypervisor'))
    reservable = tables.Column('reservable', verbose_name=_('Reservable'))

    class Meta(object):
        name = 'hosts'
        verbose_name = _('Reservable hosts')
        table_actions = (HostFilter, HostCalendar, CreateHost, DeleteHost)
        row_actions = (DeleteHost,)

    def get_object_display(self, datum):
        return datum.name
