"""Registering an option group on a ConfigOpts without sharing it.

oslo.config stores a group's registered options, and the overrides set on
them, in the ``OptGroup`` object; ``register_group`` copies that object
shallowly, so two ConfigOpts registering the same module-level group share
one options dict.  An override set on a private ConfigOpts (a test's, the
devstack plugin check's, a tool's) then shows in ``cfg.CONF`` too, and
outlives it.  Every group is therefore registered as a new ``OptGroup``
with the module-level one's name, title and help.
"""

from oslo_config import cfg


def register(conf, group, opts):
    """Register ``opts`` under a new group like ``group`` on ``conf``."""
    conf.register_group(cfg.OptGroup(group.name, title=group.title,
                                     help=group.help))
    conf.register_opts(opts, group=group.name)
