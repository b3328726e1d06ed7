"""Small helpers the plugins share: how a refused value and a date read
in the messages they give, and which values a database stores."""

import math

from climate import dates
from climate import exceptions
from climate.scheduling import filters

#: A datetime as the messages give it (``YYYY-MM-DD HH:MM:SS``), None for
#: None: the one formatter of ``climate.dates``.
fmt = dates.format_timestamp


def short(value):
    """``value``'s repr, cut to 40 characters (a refused value quoted in
    an error)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + '...'


def storable(text):
    """False for text no database stores or compares as given: a NUL
    character (PostgreSQL refuses it) or an unpaired UTF-16 surrogate
    (not UTF-8)."""
    if '\x00' in text:
        return False
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def finite(value):
    """False for a number (or a number's text) beyond a float's range:
    SQL cannot store or compare it (MariaDB has no infinity)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 2 ** 1000
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str) and len(value) < 5000:
        number = filters.as_number(value)
        return number is None or math.isfinite(number)
    return True


def check_text(value, field):
    """``value`` if it is storable text, else InvalidInput naming
    ``field``."""
    if isinstance(value, str) and not storable(value):
        raise exceptions.InvalidInput(
            reason='%s holds a NUL character or an unpaired surrogate' %
            field)
    return value
