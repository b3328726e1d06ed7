from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import messages
from horizon import tables

from climate.dashboard.api import climate as climate_api
from climate.dashboard import display
from climate.dashboard import policy

#: a series that books, or may again: the ones a cancel applies to
LIVE = ('ACTIVE', 'STOPPED')
STATUS_CHOICES = (('ACTIVE', True), ('FINISHED', True), ('CANCELLED', True),
                  ('STOPPED', False))
STATUS_DISPLAY = (('ACTIVE', _('Active')), ('FINISHED', _('Finished')),
                  ('STOPPED', _('Stopped')), ('CANCELLED', _('Cancelled')))
CONFLICT_DISPLAY = (('refuse', _('Refuse')), ('skip', _('Skip')))


class CreateSeries(tables.LinkAction):
    """A series is made from the lease create form, with a rule."""
    name = 'create'
    verbose_name = _('Create Series')
    url = 'horizon:project:leases:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = policy.SERIES_CREATE


class CancelSeries(tables.DeleteAction):
    name = 'cancel'
    policy_rules = policy.SERIES_DELETE
    help_text = _('Its occurrences not started yet are deleted; a running '
                  'one runs to its end. The series is kept, cancelled.')

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Cancel Series', 'Cancel Series', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Cancelled Series', 'Cancelled Series', count)

    def allowed(self, request, series=None):
        return series is None or series.status in LIVE

    def delete(self, request, obj_id):
        try:
            climate_api.series_delete(request, obj_id)
        except climate_api.ReservationError as exc:
            messages.error(request, exc.message)
            raise


def _next(series):
    if not series.next_start_date:
        return display.MISSING
    return '#%s, %s' % (series.next_occurrence,
                        display.short_date(series.next_start_date))


class SeriesTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Name'),
                         link='horizon:project:lease_series:detail')
    rrule = tables.Column('rrule', verbose_name=_('Rule'))
    timezone = tables.Column('timezone', verbose_name=_('Time zone'))
    on_conflict = tables.Column('on_conflict',
                                verbose_name=_('On a conflict'),
                                display_choices=CONFLICT_DISPLAY)
    status = tables.Column('status', verbose_name=_('Status'), status=True,
                           status_choices=STATUS_CHOICES,
                           display_choices=STATUS_DISPLAY)
    next = tables.Column(_next, verbose_name=_('Next to book'))
    booked = tables.Column('booked', verbose_name=_('Booked'))
    skipped = tables.Column('skipped_count', verbose_name=_('Skipped'))

    class Meta(object):
        name = 'series'
        verbose_name = _('Lease series')
        status_columns = ('status',)
        table_actions = (CreateSeries, CancelSeries)
        row_actions = (CancelSeries,)

    def get_object_display(self, datum):
        return datum.name


class OccurrencesTable(tables.DataTable):
    occurrence = tables.Column('occurrence', verbose_name=_('#'))
    name = tables.Column('name', verbose_name=_('Lease'),
                         link=lambda row: row.url)
    start_date = tables.Column('start_date', verbose_name=_('Start'),
                               filters=(display.short_date,))
    end_date = tables.Column('end_date', verbose_name=_('End'),
                             filters=(display.short_date,))
    status = tables.Column('status', verbose_name=_('Status'))

    class Meta(object):
        name = 'occurrences'
        verbose_name = _('Occurrences booked')


class SkippedTable(tables.DataTable):
    occurrence = tables.Column('occurrence', verbose_name=_('#'))
    start_date = tables.Column('start_date', verbose_name=_('Start'),
                               filters=(display.short_date,))
    end_date = tables.Column('end_date', verbose_name=_('End'),
                             filters=(display.short_date,))
    reason = tables.Column('reason', verbose_name=_('Why'))

    class Meta(object):
        name = 'skipped'
        verbose_name = _('Occurrences skipped')
