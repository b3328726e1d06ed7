from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import tables

from climate.dashboard.content import inventory
from climate.dashboard import policy


class CreateNetwork(tables.LinkAction):
    name = 'create'
    verbose_name = _('Add Network Segment')
    url = 'horizon:admin:reservation_networks:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.NETWORK_CREATE


class DeleteNetwork(inventory.DeleteInventory):
    policy_rules = policy.NETWORK_DELETE
    api_delete = 'network_delete'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Network Segment',
                             'Delete Network Segments', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Network Segment',
                             'Deleted Network Segments', count)


def _extras(network):
    extras = network.extra_capabilities
    return ', '.join('%s=%s' % item for item in sorted(extras.items())) \
        or '-'


class NetworksTable(tables.DataTable):
    network_type = tables.Column('network_type', verbose_name=_('Type'))
    physical_network = tables.Column('physical_network',
                                     verbose_name=_('Physical network'),
                                     empty_value='-')
    segment_id = tables.Column('segment_id', verbose_name=_('Segment'))
    reservable = tables.Column('reservable', verbose_name=_('Reservable'),
                               filters=(inventory.yes_no,))
    extras = tables.Column(_extras, verbose_name=_('Extra capabilities'))

    class Meta(object):
        name = 'networks'
        verbose_name = _('Reservable network segments')
        table_actions = (inventory.InventoryFilter, CreateNetwork,
                         DeleteNetwork)
        row_actions = (DeleteNetwork,)

    def get_object_display(self, datum):
        return datum.name
