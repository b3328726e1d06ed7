"""Loading resource plugins and finding the one for a resource type."""

from oslo_log import log as logging
from stevedore import named

from climate import exceptions

LOG = logging.getLogger(__name__)
NAMESPACE = 'climate.resource.plugins'


class PluginLoadError(Exception):
    pass


class Registry:
    """The plugins named in ``[manager] plugins``, by resource type."""

    def __init__(self, names, owner=None):
        def missing(names_missing):
            raise PluginLoadError(
                'unknown resource plugin(s) %s in [manager] plugins' %
                ', '.join(sorted(names_missing)))

        manager = named.NamedExtensionManager(
            NAMESPACE, names, invoke_on_load=True,
            invoke_kwds={'owner': owner},
            on_missing_entrypoints_callback=missing,
            on_load_failure_callback=self._load_failed)
        self._by_type = {}
        for ext in manager:
            rtype = ext.obj.resource_type
            if rtype in self._by_type:
                raise PluginLoadError('two plugins handle %s' % rtype)
            self._by_type[rtype] = ext.obj
            LOG.info('Loaded resource plugin %s for %s', ext.name, rtype)

    @staticmethod
    def _load_failed(_manager, entrypoint, exc):
        raise PluginLoadError('cannot load plugin %s: %s' % (
            entrypoint.name, exc)) from exc

    def get(self, resource_type):
        """The plugin for ``resource_type`` or UnsupportedResourceType."""
        try:
            return self._by_type[resource_type]
        except (KeyError, TypeError):
            raise exceptions.UnsupportedResourceType(
                resource_type=resource_type,
                available=', '.join(sorted(self._by_type)) or 'nothing')

    def enabled(self, resource_type, kind, entry_point):
        """The plugin for ``resource_type``, or NotFound (404) saying
        that ``kind`` reservations are not enabled (``[manager] plugins``
        lacks ``entry_point``): what an API route of the type answers."""
        try:
            return self.get(resource_type)
        except exceptions.UnsupportedResourceType:
            raise exceptions.NotFound(
                message='%s reservations are not enabled on this cloud '
                        '([manager] plugins lacks %s).' % (kind,
                                                           entry_point))

    def __iter__(self):
        """The loaded plugin objects."""
        return iter(list(self._by_type.values()))

    def describe(self):
        return [{'resource_type': rtype, 'description': plugin.description}
                for rtype, plugin in sorted(self._by_type.items())]
