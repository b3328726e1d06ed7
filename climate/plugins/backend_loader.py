"""Choosing what a resource plugin does in the cloud by its inventory
option (``[hosts] inventory``, ``[volumes] inventory``...).

A plugin's ``backends`` package maps each inventory name to a module; the
module is imported only when that inventory is configured, so a site on
the static inventory never imports the cloud's client libraries.
"""

import importlib

from oslo_config import cfg


class BackendUnavailable(Exception):
    """No backend for the configured inventory."""


def load(conf, resource_type, group, modules, base_class,
         option='inventory'):
    """An instance of the backend of ``[group] <option>`` (``inventory``
    unless told).

    :param modules: ``{inventory name: module path}``.
    :param base_class: the backend contract; the module's backend is its
        subclass whose ``name`` is the inventory's.
    :raises BackendUnavailable: an unknown inventory, a module that cannot
        be imported or that holds no such backend.
    """
    name = getattr(getattr(conf, group), option)
    if name not in modules:
        raise BackendUnavailable(
            'no %s backend for [%s] %s = %s; known: %s' % (
                resource_type, group, option, name,
                ', '.join(sorted(modules))))
    try:
        module = importlib.import_module(modules[name])
    except ImportError as exc:
        raise BackendUnavailable(
            'the %s backend of %s cannot be loaded (%s)' % (
                name, resource_type, exc)) from exc
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, base_class) and \
                value.name == name:
            return value(conf)
    raise BackendUnavailable('module %s holds no %s backend named %s' % (
        modules[name], resource_type, name))


class BackendOwner:
    """A plugin whose cloud actions are a backend's, made on first use so
    that loading the plugin never calls a cloud.

    Subclasses set ``backends`` (their package, with ``load(conf)``).
    """

    backends = None
    _backend = None

    @property
    def backend(self):
        """The backend of the plugin's inventory option."""
        if self._backend is None:
            self._backend = self.backends.load(cfg.CONF)
        return self._backend

    @property
    def acts_in_cloud(self):
        return self.backend.acts_in_cloud
