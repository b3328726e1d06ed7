"""Turning command-line text into request values; no I/O.

Errors are :class:`BadArgument` with a message naming the option and what
it accepts.
"""

import json
import re

from climate import dates
from climate import exceptions


class BadArgument(ValueError):
    """A command-line value that cannot be used."""


_OPEN = {'[': ']', '{': '}', '(': ')'}
_KEY = re.compile(r'^[A-Za-z_][\w:.\-]*$')
_INT = re.compile(r'^-?\d+$')
#: Reservation parameters that are lists, given as JSON text
#: (``required_floatingips=["172.24.4.10", "172.24.4.11"]``), as
#: python-blazarclient reads them.
LIST_KEYS = ('required_floatingips',)


def _value(text):
    # numbers travel as numbers (min=1, max=2), like python-blazarclient
    return int(text) if _INT.match(text) and len(text) < 19 else text


def _balanced(text):
    """No bracket or quote left open (outside quotes)."""
    stack, quote = [], None
    for char in text:
        if quote:
            if char == quote:
                quote = None
        elif char in '"\'':
            quote = char
        elif char in _OPEN:
            stack.append(_OPEN[char])
        elif stack and char == stack[-1]:
            stack.pop()
    return not stack and quote is None


def _pairs(text):
    # a comma inside brackets or quotes belongs to the value: JSON property
    # filters such as hypervisor_properties=[">=", "$vcpus", "4"]
    pairs, current = [], None
    for piece in text.split(','):
        if current is not None and not _balanced(current):
            current += ',' + piece
            continue
        if current is not None:
            pairs.append(current)
        current = piece
    pairs.append(current)
    return pairs


def key_values(text, option):
    """``key=value[,key=value...]`` into a dict.

    :param option: the option's name, for the messages.
    :raises BadArgument: a pair without ``=``, an empty or repeated key.
    """
    if not text or not text.strip():
        raise BadArgument("%s is empty: expected key=value[,key=value...]" %
                          option)
    out = {}
    for pair in _pairs(text):
        key, sep, value = pair.partition('=')
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise BadArgument(
                "%s %r: %r is not a key=value pair (expected "
                "key=value[,key=value...])" % (option, text, pair))
        if key in out:
            raise BadArgument("%s %r: key %r is given twice" % (
                option, text, key))
        out[key] = _value(value.strip())
    return out


def _params(text):
    """``key=value,...``, or a JSON object (for structured parameters:
    a pre-created instance's ``server`` boot request)."""
    if text.lstrip().startswith('{'):
        try:
            params = json.loads(text)
        except ValueError as exc:
            raise BadArgument('--reservation %r: not a JSON object (%s)' % (
                text, exc))
        if not isinstance(params, dict):
            raise BadArgument('--reservation %r: not a JSON object' % text)
        return params
    params = key_values(text, '--reservation')
    for key in LIST_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value.lstrip().startswith('['):
            try:
                params[key] = json.loads(value)
            except ValueError as exc:
                raise BadArgument('--reservation %r: %s is not a JSON list '
                                  '(%s)' % (text, key, exc))
    return params


def reservation(text):
    """One ``--reservation`` of lease-create: it must name its type."""
    params = _params(text)
    if not params.get('resource_type'):
        raise BadArgument(
            "--reservation %r: resource_type is required (e.g. "
            "resource_type=physical:host,min=1,max=2)" % text)
    return params


def reservation_change(text, lease):
    """One ``--reservation`` of lease-update: ``id=`` picks the
    reservation, optional when the lease has only one."""
    params = _params(text)
    if 'id' not in params:
        if len(lease.get('reservations') or []) != 1:
            raise BadArgument(
                "--reservation %r: give id=<reservation id>: lease %s has "
                "%d reservations" % (text, lease['id'],
                                     len(lease.get('reservations') or [])))
        params['id'] = lease['reservations'][0]['id']
    params['id'] = str(params['id'])
    return params


def extras(items, option='--extra'):
    """``--extra key=value`` options (repeatable) into a dict."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition('=')
        if not sep or not key.strip():
            raise BadArgument('%s %r: expected key=value' % (option, item))
        out[key.strip()] = value
    return out


def date(text, option, now=None):
    """A date as the API accepts it, parsed here (naive UTC).

    :raises BadArgument: with the API's own wording, naming the option.
    """
    try:
        return dates.parse(text, option, now)
    except exceptions.InvalidDate as exc:
        # Climate's sentence: Blazar's is for the API's answers
        raise BadArgument(exc.detail)


def duration(text, option):
    try:
        return dates.parse_duration(text, option)
    except exceptions.InvalidInput as exc:
        raise BadArgument(str(exc).replace('Invalid input: ', ''))
