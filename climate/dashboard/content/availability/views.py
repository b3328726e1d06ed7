from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard.content.availability import forms as search_forms
from climate.dashboard.content.availability import tables as window_tables


class IndexView(tables.DataTableView):
    """The search form, and once it is filled in, the windows found."""
    table_class = window_tables.WindowsTable
    template_name = 'project/availability/index.html'
    page_title = _('When can I get it?')

    def get_form(self):
        if not self.request.GET.get('duration'):
            return search_forms.HostSearchForm()
        return search_forms.HostSearchForm(self.request.GET)

    def get_data(self):
        self.form = self.get_form()
        self.answer = None
        if not self.form.is_bound or not self.form.is_valid():
            return []
        query = dict(self.form.cleaned_data)
        try:
            self.answer = climate_api.host_availability(self.request,
                                                        **query)
        except climate_api.ReservationError:
            exceptions.handle(self.request,
                              _('Unable to search the availability.'))
            return []
        windows = self.answer.get('windows') or []
        return [climate_api.Row(str(i), dict(w, query=query))
                for i, w in enumerate(windows)]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['form'] = self.form
        context['answer'] = self.answer
        context['searched'] = self.form.is_bound and self.form.is_valid()
        return context
