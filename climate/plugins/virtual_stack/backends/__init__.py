"""What ``virtual:stack`` does in the cloud, chosen by ``[stacks]
inventory``: ``static`` only records (the embedded default), ``heat``
validates the template with Heat and makes the stack as the lease's user.

See ``base.StackBackend`` for the contract.
"""

from climate.plugins import backend_loader
from climate.plugins.virtual_stack.backends import base

_MODULES = {
    'heat': 'climate.plugins.virtual_stack.backends.heat',
    'static': 'climate.plugins.virtual_stack.backends.static',
}

BackendUnavailable = backend_loader.BackendUnavailable


def load(conf):
    """An instance of the backend of ``[stacks] inventory`` (imported on
    demand: a site on the static inventory never imports heatclient)."""
    return backend_loader.load(conf, 'virtual:stack', 'stacks', _MODULES,
                               base.StackBackend)
