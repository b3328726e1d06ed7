"""Every (method, URL) the API serves, read from its pecan controllers.

The API reference (api-ref/source) must document each of them as a
``.. rest_method::``; ``climate/tests/unit/test_api_ref.py`` holds it to
that, and asks the running application that each route read here is one
it answers.

The walk follows pecan's conventions as Climate's controllers use them:

- a plain controller: ``index`` at its own path (a generic ``index``: the
  methods registered with ``index.when``), any other exposed method at
  ``path/name``, and each controller attribute below ``path/attribute``;
- a ``RestController``: ``get_all`` and ``post`` at its path, ``get_one``,
  ``put``, ``patch`` and ``delete`` at ``path/{id}``, each
  ``_custom_actions`` entry at ``path/action``, and each controller
  attribute at ``path/attribute`` -- or at ``path/{id}/attribute`` when
  its ``get_all`` (or, without one, its ``post``) takes the parent's id,
  and at both when it takes ``*ids``.

Path parameters are spelled ``{}`` here: the reference names them.
"""

import inspect

from pecan import rest

from climate.api import middleware
from climate.api import root

#: What is served beside pecan (oslo.middleware's load balancer check).
OUTSIDE_PECAN = frozenset([('GET', middleware.HEALTHCHECK_PATH)])
ITEM = '{}'
_ITEM_METHODS = (('get_one', 'GET'), ('put', 'PUT'), ('patch', 'PATCH'),
                 ('delete', 'DELETE'))


def _exposed(obj, name):
    member = getattr(obj, name, None)
    return member if getattr(member, 'exposed', False) else None


def _positional(function):
    """The parameters of a controller method besides ``self``."""
    return [p for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _any_ids(function):
    """Whether a controller method takes ``*ids``: it answers below the
    parent's collection and below each of its items alike."""
    return any(p.kind == p.VAR_POSITIONAL
               for p in inspect.signature(function).parameters.values())


def _children(controller):
    """(attribute name, controller) of the controllers mounted below."""
    for name in sorted(dir(type(controller))):
        if name.startswith('_'):
            continue
        value = getattr(type(controller), name, None)
        if callable(value) or isinstance(value, (str, int, float, dict,
                                                 tuple, list, type(None))):
            continue
        yield name, value


def _rest(controller, path):
    found = set()
    for name, method in (('get_all', 'GET'), ('post', 'POST')):
        if _exposed(controller, name):
            found.add((method, path))
    for name, method in _ITEM_METHODS:
        function = _exposed(controller, name)
        if function is not None:
            # ``put(self)``: the collection itself is what changes
            found.add((method, '%s/%s' % (path, ITEM)
                       if _positional(function) else path))
    for action, methods in getattr(controller, '_custom_actions',
                                   {}).items():
        for method in methods:
            found.add((method.upper(), '%s/%s' % (path, action)))
    for name, child in _children(controller):
        below = '%s/%s' % (path, name)
        # what a child answers at its own path tells where it is mounted
        # (an action on an item, as /leases/{id}/confirm, has a post only)
        get_all = _exposed(child, 'get_all') or _exposed(child, 'post')
        if get_all is not None and _any_ids(get_all):
            found |= walk(child, '%s/%s/%s' % (path, ITEM, name))
        elif get_all is not None and _positional(get_all):
            below = '%s/%s/%s' % (path, ITEM, name)
        found |= walk(child, below)
    return found


def _plain(controller, path):
    found = set()
    handlers = {}
    index = _exposed(controller, 'index')
    if index is not None:
        handlers = index._pecan.get('generic_handlers') or {}
        methods = [m for m in handlers if m != 'DEFAULT'] or ['GET']
        found |= {(m, path or '/') for m in methods}
    for name in dir(controller):
        function = _exposed(controller, name)
        if name != 'index' and not name.startswith('_') and \
                function is not None and \
                getattr(function, '__func__', function) not in \
                handlers.values():
            found.add(('GET', '%s/%s' % (path, name)))
    for name, child in _children(controller):
        found |= walk(child, '%s/%s' % (path, name))
    return found


def walk(controller, path=''):
    """The (method, path) pairs served by ``controller`` mounted at
    ``path``."""
    if isinstance(controller, rest.RestController):
        return _rest(controller, path)
    if not any(_exposed(controller, name) for name in dir(controller)) \
            and not list(_children(controller)):
        return set()
    return _plain(controller, path)


def served():
    """Every (method, path) the API serves, sorted."""
    return sorted(walk(root.RootController()) | OUTSIDE_PECAN)
