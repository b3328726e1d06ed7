"""virtual:stack: what reserving a whole stack costs over reserving its
needs one by one, and how the template analysis scales.

1. In this process, no I/O: ``needs.derive`` over templates of 10, 100
   and 1,000 resources (servers of three flavors, some in resource
   groups and auto-scaling groups, volumes, floating IPs, networks and
   ports, an unreservable type), per call.
2. Through the API (climate-api with 2 threads and one climate-manager
   over RabbitMQ, ``common.Climate``, on ``CLIMATE_BENCH_ENGINE``), on
   100 hosts, 10 volume pools and 200 floating IPs of the static
   inventories: ``POST /v1/leases`` of a stack whose template needs 2-6
   servers in a group, a volume and a floating IP (four reservations
   booked: the stack and its three parts), against ``POST /v1/leases``
   of the same three reservations sent by hand.  The difference is the
   stack's own cost (parsing, deriving, linking the parts, the larger
   body).

Bounded: each series stops at its count or after ``SERIES_SECONDS``.
"""

import datetime
import random
import sys
import time

import common
from climate.plugins.virtual_stack import needs
from climate.plugins.virtual_stack.backends import static
from climate.tests.functional import procs

HOSTS = 100
POOLS = 10
ADDRESSES = 200
CREATES = 200
WARMUP = 20
SERIES_SECONDS = 180
DERIVE_SIZES = (10, 100, 1000)
DERIVE_SECONDS = 10
FLAVORS = static.parse_flavors(['m1.small:1:2048:20', 'm1.medium:2:4096:40',
                                'm1.large:4:8192:80'])
NET = 'ext-net'
#: What a stack's create may cost over its parts sent by hand.
TARGET_OVERHEAD_P50_MS = 10.0


def big_template(size, rng):
    """A HOT template of ``size`` resources of every kind derive reads."""
    resources = {}
    for i in range(size):
        kind = i % 10
        name = 'r%04d' % i
        flavor = rng.choice(sorted(FLAVORS))
        server = {'type': 'OS::Nova::Server',
                  'properties': {'flavor': flavor, 'image': 'cirros'}}
        if kind < 3:
            resources[name] = server
        elif kind == 3:
            resources[name] = {'type': 'OS::Heat::ResourceGroup',
                               'properties': {'count': {'get_param': 'n'},
                                              'resource_def': server}}
        elif kind == 4:
            resources[name] = {'type': 'OS::Heat::AutoScalingGroup',
                               'properties': {'min_size': 1, 'max_size': 4,
                                              'resource': server}}
        elif kind == 5:
            resources[name] = {'type': 'OS::Cinder::Volume',
                               'properties': {'size': rng.randint(1, 100)}}
        elif kind == 6:
            resources[name] = {'type': 'OS::Neutron::FloatingIP',
                               'properties': {'floating_network': NET}}
        elif kind == 7:
            resources[name] = {'type': 'OS::Neutron::Port',
                               'properties': {'network': 'private'}}
        elif kind == 8:
            resources[name] = {'type': 'OS::Neutron::Net'}
        else:
            resources[name] = {'type': 'OS::Trove::Instance',
                               'properties': {'flavor': 'small', 'size': 1}}
    return {'heat_template_version': '2018-08-31',
            'parameters': {'n': {'type': 'number', 'default': 3}},
            'resources': resources}


def measure_derive():
    rng = random.Random(5)
    for size in DERIVE_SIZES:
        template = big_template(size, rng)
        times = []
        deadline = time.monotonic() + DERIVE_SECONDS
        while len(times) < 200 and time.monotonic() < deadline:
            began = time.perf_counter()
            derived = needs.derive(template, {}, {}, FLAVORS)
            times.append((time.perf_counter() - began) * 1000)
        print('  derive, %4d resources -> %d needs: n=%d p50 %.0f us  '
              'p99 %.0f us' % (size, len(derived['needs']), len(times),
                               common.percentile(times, 50) * 1000,
                               common.percentile(times, 99) * 1000))


STACK_TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 2}
resources:
  web:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.small, image: cirros, networks: [{network: private}]}
  data:
    type: OS::Cinder::Volume
    properties: {size: 20}
  ip:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: ext-net}
  private:
    type: OS::Neutron::Net
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: private}}
"""


def _by_hand(count):
    return [{'resource_type': 'virtual:instance', 'amount': count,
             'vcpus': 1, 'memory_mb': 2048, 'disk_gb': 20,
             'affinity': None},
            {'resource_type': 'virtual:volume', 'size_gb': 20, 'count': 1},
            {'resource_type': 'virtual:floatingip', 'network_id': NET,
             'amount': 1}]


def _series(client, label, make):
    times, granted = [], 0
    deadline = time.monotonic() + SERIES_SECONDS
    for i in range(WARMUP + CREATES):
        if time.monotonic() > deadline:
            break
        body = make(i)
        began = time.perf_counter()
        resp = client.request('POST', '/v1/leases', expect=(201, 400, 409),
                              json=body)
        ms = (time.perf_counter() - began) * 1000
        if i >= WARMUP:
            times.append(ms)
            granted += resp.status_code == 201
    print('  %s: %s; %d granted' % (label, common.summary(times), granted))
    return times


def measure_api(env):
    admin = env.client(version='1.5')
    for i in range(HOSTS):
        admin.request('POST', '/v1/os-hosts', expect=(201,), json={
            'name': 'bench-host-%03d' % i, 'vcpus': 32,
            'memory_mb': 131072, 'local_gb': 2000})
    for i in range(POOLS):
        admin.request('POST', '/v1/volume-pools', expect=(201,), json={
            'name': 'bench@lvm#pool-%02d' % i, 'total_capacity_gb': 20000})
    for i in range(ADDRESSES):
        admin.request('POST', '/v1/floatingips', expect=(201,), json={
            'floating_network_id': NET,
            'floating_ip_address': '10.%d.%d.%d' % (
                100 + i // 65536, (i // 256) % 256, i % 256)})
    admin.close()
    client = env.client()
    rng = random.Random(11)
    base = procs.utcnow().replace(microsecond=0) + datetime.timedelta(
        days=30)

    def window(i):
        start = base + datetime.timedelta(hours=rng.randint(0, 24 * 300))
        return {'name': 'bench-%05d-%d' % (i, rng.randint(0, 10 ** 6)),
                'events': [], 'start_date': procs.iso(start),
                'end_date': procs.iso(start + datetime.timedelta(hours=4))}

    def stack(i):
        return dict(window(i), reservations=[{
            'resource_type': 'virtual:stack', 'template': STACK_TEMPLATE,
            'parameters': {'count': rng.randint(2, 6)}}])

    def by_hand(i):
        return dict(window(i), reservations=_by_hand(rng.randint(2, 6)))

    hand_ms = _series(client, 'the three reservations by hand', by_hand)
    stack_ms = _series(client, 'a stack of them (4 reservations)', stack)
    client.close()
    overhead = common.percentile(stack_ms, 50) - common.percentile(
        hand_ms, 50)
    print('  the stack\'s own cost, p50: %.1f ms: %s' % (
        overhead, common.verdict(overhead, TARGET_OVERHEAD_P50_MS)))
    return {'stack_p50_ms': common.percentile(stack_ms, 50),
            'by_hand_p50_ms': common.percentile(hand_ms, 50),
            'overhead_p50_ms': overhead}


def run():
    print('== virtual:stack: template analysis, and a stack\'s create '
          'through the API against its parts by hand (%s)' % common.ENGINE)
    measure_derive()
    with common.Climate(managers=1, api_threads=2) as env:
        return measure_api(env)


if __name__ == '__main__':
    run()
