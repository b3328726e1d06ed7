from django.utils.translation import gettext_lazy as _
from horizon import tables


class ProjectFilter(tables.FilterAction):
    # filters the page's projects, by name
    filter_type = 'query'

    def filter(self, table, rows, filter_string):
        query = filter_string.lower()
        return [row for row in rows if query in str(row.name).lower()]


class ProjectsTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Project'),
                         link='horizon:admin:reservation_projects:project')
    reserved = tables.Column('reserved',
                             verbose_name=_('Reserved this period'))
    own_limits = tables.Column('own_limits', verbose_name=_('Quotas'))

    class Meta(object):
        name = 'projects'
        verbose_name = _('Projects')
        table_actions = (ProjectFilter,)
        pagination_param = 'marker'

    def get_object_display(self, datum):
        return datum.name
