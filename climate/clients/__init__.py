"""Sessions and clients for the OpenStack services Climate talks to.

``keystone`` gives keystoneauth1 sessions (Climate's service session from ``[service_auth]``,
trusts and trust-scoped sessions); ``nova`` builds novaclient clients on such a session.
Every function takes an optional ``conf``; by default Climate's global configuration.
"""


def get_conf(conf=None):
    """Return ``conf``, or Climate's global configuration (which registers the options)."""
    if conf is not None:
        return conf
    from climate import conf as climate_conf
    return climate_conf.CONF
