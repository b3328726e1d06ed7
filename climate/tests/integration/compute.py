"""Helpers of the host reservation tests: Nova as its admin and users see it.

Servers boot on the harness's fake hypervisors (``--nic none``); the
scheduler runs Climate's ``ClimateFilter`` when the cloud was brought up by
these tests' ``cloud`` fixture (``NOVA_FILTER_PATH``/``NOVA_EXTRA_FILTERS``).
"""

import uuid

from keystoneauth1 import adapter
from novaclient import client as nova_client
from novaclient import exceptions as nova_exc
from oslo_config import cfg

from climate.conf import clients as clients_conf
from climate.conf import hosts as hosts_conf
from climate.tests.functional.procs import wait_for

WAIT = 120  # seconds any single server transition may take on the fake driver
HOST_ATTR = 'OS-EXT-SRV-ATTR:host'


def backend_conf(climate_config, **hosts):
    """A ConfigOpts with ``[service_auth]``, ``[nova]`` and ``[hosts]`` from
    the integration config, ``[hosts]`` values overridden by ``hosts``."""
    conf = cfg.ConfigOpts()
    clients_conf.register_opts(conf)
    hosts_conf.register_opts(conf)
    conf(['--config-file', str(climate_config)], project='climate',
         default_config_files=[])
    for key, value in hosts.items():
        conf.set_override(key, value, group='hosts')
    return conf


class Compute:
    """Nova for the admin and for the harness's users."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.admin = self.nova('admin')
        self.flavor = self.admin.flavors.find(name=cloud.info['flavors'][0]).id
        image = adapter.Adapter(cloud.session('admin'), service_type='image',
                                interface='public',
                                region_name=cloud.region)
        self.image_api = image
        self.image = image.get('/v2/images', params={
            'name': cloud.info['image']}).json()['images'][0]['id']

    def nova(self, who):
        return nova_client.Client('2.60', session=self.cloud.session(who),
                                  region_name=self.cloud.region)

    def project_id(self, who):
        return self.cloud.session(who).get_project_id()

    def boot(self, who, hint=None, wait=True):
        """Boot a server as ``who`` (optionally with ``--hint
        reservation=hint``); wait until ACTIVE or ERROR and return it as the
        admin sees it (with its host)."""
        hints = {'reservation': hint} if hint is not None else None
        server = self.nova(who).servers.create(
            'climate-it-' + uuid.uuid4().hex[:8], image=self.image,
            flavor=self.flavor, nics='none', scheduler_hints=hints)
        if not wait:
            return server
        return wait_for(lambda: self._settled(server.id), WAIT,
                        message=f'server {server.id} ACTIVE or ERROR')

    def boot_active(self, who, count, hint=None):
        """``count`` servers of ``who`` that must become ACTIVE."""
        servers = [self.boot(who, hint=hint) for _ in range(count)]
        for s in servers:
            assert s.status == 'ACTIVE', getattr(s, 'fault', None)
        return servers

    def _settled(self, server_id):
        s = self.admin.servers.get(server_id)
        return s if s.status in ('ACTIVE', 'ERROR') else None

    def check_filter(self, reservation_id, reserved, count, owner='demo',
                     other='alt'):
        """ClimateFilter at work: ``count`` servers of ``owner`` with the
        hint land on ``reserved`` hosts, ``count`` without it never there,
        and ``other``'s with the hint find no valid host.

        :returns: (servers with the hint, servers without it).
        """
        mine = self.boot_active(owner, count, hint=reservation_id)
        assert {self.host_of(s) for s in mine} <= set(reserved)
        # the freepool's hosts, or hypervisors Climate does not manage
        plain = self.boot_active(owner, count)
        assert not {self.host_of(s) for s in plain} & set(reserved)
        refused = self.boot(other, hint=reservation_id)
        assert refused.status == 'ERROR'
        assert 'No valid host' in refused.fault['message']
        return mine, plain

    def host_of(self, server):
        return getattr(server, HOST_ATTR)

    def servers_on(self, host):
        return self.admin.servers.list(search_opts={'all_tenants': True,
                                                    'host': host})

    def gone(self, server_id):
        try:
            self.admin.servers.get(server_id)
        except nova_exc.NotFound:
            return True
        return False

    def aggregate(self, name):
        """The aggregate named ``name``, None when there is none."""
        found = [a for a in self.admin.aggregates.list() if a.name == name]
        assert len(found) <= 1, found
        return found[0] if found else None

    def hosts_of(self, name):
        agg = self.aggregate(name)
        return sorted(agg.hosts) if agg is not None else None

    def assert_released(self, reservation_id, names):
        """The reservation's aggregate is gone and exactly ``names`` are
        in the freepool."""
        assert self.aggregate(reservation_id) is None
        assert self.hosts_of('freepool') == sorted(names)

    def images_named(self, name):
        return self.image_api.get('/v2/images',
                                  params={'name': name}).json()['images']
