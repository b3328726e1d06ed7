from django import shortcuts
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import messages
from horizon import tables
from horizon import views

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.maintenance import forms as window_forms
from climate.dashboard.content.maintenance import plan
from climate.dashboard.content.maintenance import tables as window_tables
from climate.dashboard import display

INDEX_URL = 'horizon:admin:reservation_maintenance:index'


class IndexView(tables.DataTableView):
    table_class = window_tables.WindowsTable
    template_name = 'horizon/common/_data_table_view.html'
    page_title = _('Maintenance Windows')

    def get_data(self):
        try:
            return climate_api.maintenance_list(self.request)
        except climate_api.ReservationError:
            exceptions.handle(self.request,
                              _('Unable to list the maintenance windows.'))
            return []


class PlanView(views.HorizonFormView):
    """Plan a window (the API's ``dry_run``: the leases it hits and what
    can be done to each), then apply it with an action per lease and/or
    a default one: all of it, or nothing and the API's reason."""
    form_class = window_forms.WindowForm
    template_name = 'admin/reservation_maintenance/plan.html'
    page_title = _('Plan Maintenance')

    def form_valid(self, form):
        body = form.body()
        default = form.cleaned_data.get('default_action') or None
        chosen = plan.chosen_actions(self.request.POST)
        error = None
        if 'apply' in self.request.POST:
            try:
                window = climate_api.maintenance_apply(
                    self.request, body, chosen, default)
            except climate_api.ReservationError as exc:
                error = exc.message  # planned again below, as it is now
            else:
                messages.success(self.request, _(
                    'Maintenance window "%(name)s" applied: %(count)d '
                    'leases changed.') % {'name': window.name,
                                          'count': window.hit_count})
                return shortcuts.redirect(reverse(INDEX_URL))
        try:
            window = climate_api.maintenance_plan(self.request, body)
        except climate_api.ReservationError as exc:
            form.add_error(None, error or exc.message)
            return self.form_invalid(form)
        return self.render_to_response(self.get_context_data(
            form=form, window=window, hits=plan.hits(window, chosen),
            apply_error=error,
            start_text=display.short_date(window.start_date),
            end_text=display.short_date(window.end_date)))
