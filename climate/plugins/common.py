"""Small helpers the plugins share: how a refused value and a date read
in the messages they give."""


def short(value):
    """``value``'s repr, cut to 40 characters (a refused value quoted in
    an error)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + '...'


def fmt(when):
    """A datetime as the messages give it (``YYYY-MM-DD HH:MM:SS``), None
    for None."""
    return when.strftime('%Y-%m-%d %H:%M:%S') if when else None
