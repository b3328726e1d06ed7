from django.utils.translation import gettext_lazy as _
from horizon import tables


class UsageTable(tables.DataTable):
    resource_type = tables.Column('resource_type',
                                  verbose_name=_('Resource type'))
    resource_class = tables.Column('resource_class',
                                   verbose_name=_('Resource'))
    past = tables.Column('past', verbose_name=_('Past'))
    current = tables.Column('current', verbose_name=_('Running now'),
                            empty_value='-')
    future = tables.Column('future', verbose_name=_('Booked ahead'))
    total = tables.Column('total', verbose_name=_('Total'))
    unit = tables.Column('unit', verbose_name=_('Unit'))

    class Meta(object):
        name = 'usage'
        verbose_name = _('Reserved hours this period')


class QuotaTable(tables.DataTable):
    limit_name = tables.Column('limit_name', verbose_name=_('Limit'))
    limit = tables.Column('limit', verbose_name=_('Allowed'))
    used = tables.Column('used', verbose_name=_('Used'))

    class Meta(object):
        name = 'quotas'
        verbose_name = _('Quotas')
