from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import messages
from horizon import tables
from horizon.utils import functions as utils
from openstack_dashboard.api import keystone

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.project_usage import rows
from climate.dashboard.content.project_usage import tables as usage_tables
from climate.dashboard.content.usage import views as usage_views
from climate.dashboard import display


def _page(projects, marker, size):
    """``(page, has_more)``: the projects after ``marker`` (an id), in
    the order of their names."""
    projects = sorted(projects, key=lambda p: ((p.name or '').lower(), p.id))
    start = 0
    if marker:
        for i, project in enumerate(projects):
            if project.id == marker:
                start = i + 1
                break
    return projects[start:start + size], len(projects) > start + size


class IndexView(tables.DataTableView):
    """Every project of Keystone, a page at a time, with what it reserved
    this period (one ``/v1/usage`` call per project of the page, so that
    the page costs the same with 10 projects or 10,000) and whether it
    has limits of its own (``/v1/quotas``)."""
    table_class = usage_tables.ProjectsTable
    template_name = 'admin/reservation_projects/index.html'
    page_title = _('Project Usage')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._more = False
        self.period = {}
        self.defaults = None

    def has_more_data(self, table):
        return self._more

    def get_data(self):
        marker = self.request.GET.get(
            usage_tables.ProjectsTable._meta.pagination_param)
        try:
            projects, _more = keystone.tenant_list(self.request)
        except Exception:
            exceptions.handle(self.request, _('Unable to list the projects.'))
            return []
        page, self._more = _page(projects, marker,
                                 utils.get_page_size(self.request))
        own = set()
        try:
            listing = climate_api.quota_list(self.request)
            own = {p.get('project_id') for p in listing.get('projects') or []}
            self.defaults = listing.get('defaults')
        except climate_api.ReservationError as exc:
            messages.error(self.request, exc.message)
        result = []
        failed = None
        for project in page:
            usage = {}
            try:
                usage = climate_api.usage_get(self.request,
                                              project_id=project.id)
                self.period = self.period or usage
            except climate_api.ReservationError as exc:
                failed = failed or exc
                result.append(rows.project_row(project, {}, project.id in own,
                                               failed=True))
                continue
            result.append(rows.project_row(project, usage,
                                           project.id in own))
        if failed:
            messages.error(self.request, failed.message)
        return result

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        table = context.get('table')
        data = table.data if table is not None else []
        context['charts'] = rows.unit_charts(data)
        context['period_start'] = display.short_date(self.period.get('start'))
        context['period_end'] = display.short_date(self.period.get('end'))
        return context


class ProjectView(usage_views.IndexView):
    """One project's usage and quotas, as its members see them."""
    template_name = 'admin/reservation_projects/project.html'

    def project_id(self):
        return self.kwargs['project_id']

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        name = self.project_id()
        try:
            name = keystone.tenant_get(self.request, name).name or name
        except Exception:
            pass  # a project Keystone no longer knows: its id
        context['project_name'] = name
        context['page_title'] = _('Usage & Quotas of %s') % name
        return context
