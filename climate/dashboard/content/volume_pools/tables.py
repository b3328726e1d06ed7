from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import tables

from climate.dashboard.content import inventory
from climate.dashboard import policy


class CreatePool(tables.LinkAction):
    name = 'create'
    verbose_name = _('Add Volume Pool')
    url = 'horizon:admin:reservation_volume_pools:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.VOLUME_POOL_CREATE


class DeletePool(inventory.DeleteInventory):
    policy_rules = policy.VOLUME_POOL_DELETE
    api_delete = 'volume_pool_delete'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Volume Pool', 'Delete Volume Pools',
                             count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Volume Pool', 'Deleted Volume Pools',
                             count)


def _capabilities(pool):
    caps = pool.capabilities or {}
    return ', '.join('%s=%s' % item for item in sorted(caps.items())) or '-'


class VolumePoolsTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Pool'))
    backend = tables.Column('backend', verbose_name=_('Backend'))
    capacity_gb = tables.Column('capacity_gb',
                                verbose_name=_('Reservable (GB)'))
    total_capacity_gb = tables.Column('total_capacity_gb',
                                      verbose_name=_('Total (GB)'))
    reserved_percentage = tables.Column('reserved_percentage',
                                        verbose_name=_('Reserved %'))
    ratio = tables.Column('max_over_subscription_ratio',
                          verbose_name=_('Over-subscription'))
    reservable = tables.Column('reservable', verbose_name=_('Reservable'),
                               filters=(inventory.yes_no,))
    capabilities = tables.Column(_capabilities,
                                 verbose_name=_('Capabilities'))

    class Meta(object):
        name = 'volume_pools'
        verbose_name = _('Volume pools')
        table_actions = (inventory.InventoryFilter, CreatePool, DeletePool)
        row_actions = (DeletePool,)

    def get_object_display(self, datum):
        return datum.name
