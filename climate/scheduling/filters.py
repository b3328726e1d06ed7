"""The host filter language: parsing, validation and evaluation; no I/O.

A filter is Blazar's (and Nova's JsonFilter's) JSON list, usually sent as
a string: ``[op, arg, ...]`` where a ``"$name"`` argument is a property
of the host.  Climate accepts:

``["=", "$p", v]``, ``["!=", ...]``, ``["<", ...]``, ``["<=", ...]``,
``[">", ...]``, ``[">=", ...]``
    Compare the property with the literal ``v`` (a string or a number).
    When both the host's value and ``v`` read as numbers (``-12``,
    ``4096``, ``2.5``) they are compared as numbers, so ``"10" > "9"``;
    otherwise as strings.  A host without the property matches none of
    these (not even ``!=``).
``["in", "$p", v1, v2, ...]``
    The property equals one of the values (with the same number rule).
``["and", f1, f2, ...]``, ``["or", f1, f2, ...]``, ``["not", f]``
    Combine filters.  ``not`` matches hosts without the property too.

The empty string, ``null`` and ``[]`` mean "every host".  A malformed
filter raises InvalidInput naming the place, e.g.
``resource_properties[2][0]: unknown operator 'like'``.

:func:`parse` returns a small tree that :func:`evaluate` runs against a
dict of properties and that ``climate.db.hosts`` compiles to SQL; both
follow the rules above, and the unit tests hold them to each other.
"""

import collections
import json
import math
import re

from climate import exceptions

COMPARISONS = ('=', '!=', '<', '<=', '>', '>=')
LOGICAL = ('and', 'or', 'not')
OPERATORS = COMPARISONS + ('in',) + LOGICAL
#: Other spellings accepted for an operator (``==`` as in C and Python).
ALIASES = {'==': '='}
# a filter is a small document, not a program
MAX_DEPTH = 16
MAX_NODES = 256
MAX_NAME = 255
MAX_VALUE = 255

_NUMBER = re.compile(r'^\s*-?\d+(\.\d+)?\s*$')


def as_number(value):
    """The value as a float when it reads as a decimal number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER.match(value):
        return float(value)
    return None


#: A comparison of a property with a literal.
Cmp = collections.namedtuple('Cmp', 'op name value')
#: A property equal to one of ``values`` (a tuple).
In = collections.namedtuple('In', 'name values')
#: ``and``, ``or`` or ``not`` (one child) over ``children`` (a tuple).
Logic = collections.namedtuple('Logic', 'op children')


_FLIPPED = {'=': '=', '!=': '!=', '<': '>', '<=': '>=', '>': '<',
            '>=': '<='}


class _Parser:
    def __init__(self, field, names):
        self.field = field
        self.names = names
        self.nodes = 0

    def fail(self, path, reason):
        raise exceptions.InvalidInput(reason='%s%s: %s' % (
            self.field, ''.join('[%d]' % i for i in path), reason))

    def variable(self, path, arg):
        if not (isinstance(arg, str) and arg.startswith('$') and
                len(arg) > 1):
            return None
        name = arg[1:]
        if len(name) > MAX_NAME:
            self.fail(path, 'property names are at most %d characters' %
                      MAX_NAME)
        if self.names is not None and name not in self.names:
            self.fail(path, 'unknown property $%s; this filter knows %s' % (
                name, ', '.join('$' + n for n in sorted(self.names))))
        return name

    def literal(self, path, arg):
        if isinstance(arg, bool):
            # Blazar stores capabilities as text: true is "True"
            return str(arg)
        if isinstance(arg, (int, float)):
            if not math.isfinite(arg):
                self.fail(path, 'numbers must be finite')
            return arg
        if isinstance(arg, str):
            if arg.startswith('$'):
                self.fail(path, 'compare a property with a value, not with '
                                'another property (%s)' % arg)
            if len(arg) > MAX_VALUE:
                self.fail(path, 'values are at most %d characters' %
                          MAX_VALUE)
            return arg
        self.fail(path, 'expected a string or a number, not %s' %
                  _json_type(arg))

    def node(self, path, expr):
        self.nodes += 1
        if self.nodes > MAX_NODES:
            self.fail(path, 'the filter has more than %d parts' % MAX_NODES)
        if len(path) > MAX_DEPTH:
            self.fail(path, 'the filter nests deeper than %d levels' %
                      MAX_DEPTH)
        if not isinstance(expr, list) or not expr:
            self.fail(path, 'expected a list like ["=", "$name", "value"], '
                            'not %s' % _json_type(expr))
        op = expr[0]
        if isinstance(op, str):
            op = ALIASES.get(op, op)
        if not isinstance(op, str) or op.lower() not in OPERATORS:
            self.fail(path + [0], 'unknown operator %s; use one of %s' % (
                json.dumps(op), ' '.join(OPERATORS)))
        op = op.lower()
        args = expr[1:]
        if op in COMPARISONS:
            if len(args) != 2:
                self.fail(path, "'%s' takes a property and a value, got %d "
                                "argument(s)" % (op, len(args)))
            name = self.variable(path + [1], args[0])
            if name is not None:
                return Cmp(op, name, self.literal(path + [2], args[1]))
            name = self.variable(path + [2], args[1])
            if name is None:
                self.fail(path + [1], "one side of '%s' must be a property "
                                      "such as \"$memory_mb\"" % op)
            return Cmp(_FLIPPED[op], name, self.literal(path + [1], args[0]))
        if op == 'in':
            if len(args) < 2:
                self.fail(path, "'in' takes a property and at least one "
                                "value")
            name = self.variable(path + [1], args[0])
            if name is None:
                self.fail(path + [1], "the first argument of 'in' must be a "
                                      "property such as \"$gpu\"")
            return In(name, tuple(self.literal(path + [i + 2], v)
                                  for i, v in enumerate(args[1:])))
        if op == 'not':
            if len(args) != 1:
                self.fail(path, "'not' takes exactly one filter, got %d" %
                          len(args))
            return Logic('not', (self.node(path + [1], args[0]),))
        if not args:
            self.fail(path, "'%s' takes at least one filter" % op)
        return Logic(op, tuple(self.node(path + [i + 1], a)
                               for i, a in enumerate(args)))


def _json_type(value):
    if value is None:
        return 'null'
    return {bool: 'a boolean', int: 'a number', float: 'a number',
            str: 'a string', list: 'a list', dict: 'an object'}.get(
        type(value), type(value).__name__)


def parse(value, field, names=None):
    """Parse and validate a filter.

    :param value: the filter as sent: a JSON string, a list, or empty.
    :param field: the request field, for error messages.
    :param names: the property names allowed, or None for any.
    :returns: the tree, or None when the filter is empty.
    :raises InvalidInput: naming ``field`` and the position of the error.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise exceptions.InvalidInput(
                reason='%s is not valid JSON: %s' % (field, exc))
    if value is None or value == []:
        return None
    return _Parser(field, names).node([], value)


def names_in(tree):
    """Every property name the tree mentions."""
    if tree is None:
        return set()
    if isinstance(tree, Logic):
        return set().union(*(names_in(c) for c in tree.children))
    return {tree.name}


def _compare(op, have, want):
    left, right = as_number(have), as_number(want)
    if left is None or right is None:
        left, right = str(have), str(want)
    if op == '=':
        return left == right
    if op == '!=':
        return left != right
    if op == '<':
        return left < right
    if op == '<=':
        return left <= right
    if op == '>':
        return left > right
    return left >= right


def evaluate(tree, props):
    """Whether a host with properties ``props`` (name -> value) matches."""
    if tree is None:
        return True
    if isinstance(tree, Logic):
        if tree.op == 'and':
            return all(evaluate(c, props) for c in tree.children)
        if tree.op == 'or':
            return any(evaluate(c, props) for c in tree.children)
        return not evaluate(tree.children[0], props)
    if props.get(tree.name) is None:
        return False
    have = props[tree.name]
    if isinstance(tree, In):
        return any(_compare('=', have, v) for v in tree.values)
    return _compare(tree.op, have, tree.value)
