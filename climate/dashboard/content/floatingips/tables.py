from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import tables

from climate.dashboard.content import inventory
from climate.dashboard import policy


class CreateFloatingIP(tables.LinkAction):
    name = 'create'
    verbose_name = _('Add Floating IP')
    url = 'horizon:admin:reservation_floatingips:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.FLOATINGIP_CREATE


class DeleteFloatingIP(inventory.DeleteInventory):
    policy_rules = policy.FLOATINGIP_DELETE
    api_delete = 'floatingip_delete'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Floating IP', 'Delete Floating IPs',
                             count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Floating IP', 'Deleted Floating IPs',
                             count)


class FloatingIPsTable(tables.DataTable):
    address = tables.Column('floating_ip_address',
                            verbose_name=_('Address'))
    network = tables.Column('floating_network_id',
                            verbose_name=_('External network'))
    subnet = tables.Column('subnet_id', verbose_name=_('Subnet'),
                           empty_value='-')
    reservable = tables.Column('reservable', verbose_name=_('Reservable'),
                               filters=(inventory.yes_no,))

    class Meta(object):
        name = 'floatingips'
        verbose_name = _('Reservable floating IPs')
        table_actions = (inventory.InventoryFilter, CreateFloatingIP,
                         DeleteFloatingIP)
        row_actions = (DeleteFloatingIP,)

    def get_object_display(self, datum):
        return datum.name
