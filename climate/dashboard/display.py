"""Values of the API as the panels show them.

The API speaks naive UTC (``2030-01-31T12:00:00.000000``); the panels show
minutes and say UTC, since every date typed into a form is UTC too.
"""

import datetime

from django.utils.translation import gettext_lazy as _

from climate import dates

#: what a table shows for a value the API left out
MISSING = '-'


def short_date(text):
    """``2030-01-31 12:00 UTC`` of an API date (or the text unchanged
    when it is no date)."""
    if not text:
        return MISSING
    try:
        value = datetime.datetime.fromisoformat(str(text).rstrip('Zz'))
    except ValueError:
        return text
    return '%s UTC' % value.strftime(dates.BLAZAR_FORMAT)


def parse_api_date(text):
    """The naive UTC datetime of a date the API or a form gave
    ('now' included)."""
    return dates.parse(text, 'date')


def api_date(value):
    """A form's datetime as the API takes it (``YYYY-MM-DD HH:MM``)."""
    return value.strftime(dates.BLAZAR_FORMAT)


def hours(seconds):
    """``4 h``, ``1 h 30 min``: a length of time in words a table fits."""
    seconds = int(seconds or 0)
    whole_hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if whole_hours and minutes:
        return _('%(h)d h %(m)d min') % {'h': whole_hours, 'm': minutes}
    if whole_hours:
        return _('%d h') % whole_hours
    return _('%d min') % minutes
