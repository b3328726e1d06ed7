from django.utils.translation import gettext_lazy as _
from horizon import tables

from climate.dashboard import display

CHECK_NAMES = (('database', _('Database')),
               ('message_bus', _('Message bus (a manager answering)')))


def _state(check):
    return 'ok' if check.ok else 'failing'


def _detail(check):
    if not check.ok:
        return check.fields.get('error') or display.MISSING
    if check.fields.get('manager'):
        return _('answered by %s') % check.fields['manager']
    return display.MISSING


class ChecksTable(tables.DataTable):
    check = tables.Column('id', verbose_name=_('Check'),
                          display_choices=CHECK_NAMES)
    state = tables.Column(_state, verbose_name=_('State'), status=True,
                          status_choices=(('ok', True),
                                          ('failing', False)),
                          display_choices=(('ok', _('OK')),
                                           ('failing', _('Failing'))))
    seconds = tables.Column('seconds', verbose_name=_('Seconds'),
                            empty_value=display.MISSING)
    detail = tables.Column(_detail, verbose_name=_('Detail'))

    class Meta(object):
        name = 'checks'
        verbose_name = _('Checks')
        footer = False
