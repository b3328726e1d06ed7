"""Small helpers the plugins share: how a refused value and a date read
in the messages they give."""

from climate import dates

#: A datetime as the messages give it (``YYYY-MM-DD HH:MM:SS``), None for
#: None: the one formatter of ``climate.dates``.
fmt = dates.format_timestamp


def short(value):
    """``value``'s repr, cut to 40 characters (a refused value quoted in
    an error)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + '...'
