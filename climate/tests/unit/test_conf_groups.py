"""Two ConfigOpts with Climate's options never share an override.

oslo.config keeps a group's options in the registered OptGroup object and
copies it shallowly on registration: a module-level group registered on a
test's own ConfigOpts shared its overrides with ``cfg.CONF``.  A test that
set ``[hosts] inventory = nova`` on its own configuration then turned every
later in-process environment of the same worker onto Nova ("Nova is
unavailable: ... [service_auth] auth_type is not set").
"""

from oslo_config import cfg

from climate import conf as climate_conf

def fresh():
    conf = cfg.ConfigOpts()
    climate_conf.register_opts(conf)
    conf([], default_config_files=[])
    return conf


def test_no_two_configurations_share_a_groups_options():
    # where oslo.config keeps the overrides: one dict per group and
    # configuration, never the one cfg.CONF holds
    mine, other = fresh(), fresh()
    assert len(mine._groups) >= 19
    for name, group in mine._groups.items():
        assert group._opts is not other._groups[name]._opts, name
        assert group._opts is not cfg.CONF._groups[name]._opts, name


def test_the_hosts_inventory_of_a_private_configuration_stays_private():
    mine = fresh()
    mine.set_override('inventory', 'nova', group='hosts')
    mine.set_override('enabled', True, group='power')
    other = fresh()
    assert (cfg.CONF.hosts.inventory, other.hosts.inventory) == (
        'static', 'static')
    assert (cfg.CONF.power.enabled, other.power.enabled) == (False, False)
