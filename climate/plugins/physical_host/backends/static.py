"""The ``static`` inventory: hosts the operator declares, no cloud calls.

A site without Nova (and the embedded ``climate-all``) reserves hosts that
exist only in Climate's inventory.  Their facts come from the create
request itself (``vcpus``, ``memory_mb``, ``local_gb``, ``cpu_info``,
``hypervisor_type``, ``hypervisor_version``, ``service_name``; see
``climate.plugins.physical_host.inventory``), every other key is an extra
capability.  Lease start, before-end snapshot and end only send a
notification (``climate.host.reservation.start``, ``.snapshot``, ``.end``,
``.replace``) for whatever hands the machines over outside OpenStack.
Hosts are never reported down.
"""

from oslo_log import log as logging

from climate.plugins.physical_host.backends import base
from climate import context as climate_context
from climate import rpc

LOG = logging.getLogger(__name__)


def _names(hosts):
    return [h['hypervisor_hostname'] for h in hosts]


class StaticBackend(base.InventoryBackend):
    name = 'static'
    # start and end only send notifications
    acts_in_cloud = False

    def __init__(self, conf):
        super().__init__(conf)
        self._notifier = None

    def _notify(self, action, payload):
        try:
            if self._notifier is None:
                self._notifier = rpc.get_notifier('climate.hosts')
            self._notifier.info(climate_context.admin_context(),
                                'climate.host.reservation.%s' % action,
                                payload)
        except Exception:  # a metering outage must not fail a lease event
            LOG.exception('Could not send climate.host.reservation.%s',
                          action)

    def describe_host(self, name):
        return {'hypervisor_hostname': name, 'service_name': name,
                'vcpus': 0, 'memory_mb': 0, 'local_gb': 0,
                'cpu_info': None, 'hypervisor_type': 'static',
                'hypervisor_version': None}

    #: servers are not known here: nothing says a host is idle
    reports_servers = False

    def host_has_servers(self, host):
        return False

    def host_servers(self, host):
        return []

    def enroll(self, host):
        LOG.info('Static host %s enrolled', host['hypervisor_hostname'])

    def withdraw(self, host):
        LOG.info('Static host %s withdrawn', host['hypervisor_hostname'])

    def start(self, reservation_id, project_id, hosts):
        LOG.info('Reservation %s starts on %s', reservation_id,
                 ', '.join(_names(hosts)))
        self._notify('start', {'reservation_id': reservation_id,
                               'project_id': project_id,
                               'hosts': _names(hosts)})

    def snapshot(self, reservation_id, hosts):
        self._notify('snapshot', {'reservation_id': reservation_id,
                                  'hosts': _names(hosts)})

    def end(self, reservation_id, hosts):
        LOG.info('Reservation %s ends on %s', reservation_id,
                 ', '.join(_names(hosts)))
        self._notify('end', {'reservation_id': reservation_id,
                             'hosts': _names(hosts)})

    def replace(self, reservation_id, project_id, old_hosts, new_hosts):
        self._notify('replace', {'reservation_id': reservation_id,
                                 'project_id': project_id,
                                 'removed': _names(old_hosts),
                                 'added': _names(new_hosts)})

    def down_hosts(self, hosts):
        return []
