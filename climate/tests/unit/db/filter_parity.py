"""The host filter compiled to SQL selects exactly the hosts that
``climate.scheduling.filters.evaluate`` accepts.

Shared by the unit test (SQLite) and the functional one (MariaDB and
PostgreSQL, whose collations must compare text byte by byte).
"""

import random

from climate import context
from climate.db import hosts as db_hosts
from climate.scheduling import filters

VALUES = ('1', '2', '10', '9', '2.5', '-3', 'x', 'X', 'a b', 'é', '10a',
          'True', 'False')
NAMES = ('a', 'b', 'c')
FACTS = {'vcpus': (1, 8, 16, 64),
         'hypervisor_type': ('QEMU', 'qemu', 'ironic')}


def make_hosts(ctx, rng, count=40):
    hosts = {}
    for i in range(count):
        caps = {n: rng.choice(VALUES) for n in NAMES if rng.random() < 0.8}
        facts = {'hypervisor_hostname': 'p%03d' % i,
                 'service_name': 'p%03d' % i,
                 'vcpus': rng.choice(FACTS['vcpus']),
                 'memory_mb': 0, 'local_gb': 0,
                 'hypervisor_type': rng.choice(FACTS['hypervisor_type'])}
        host_id = db_hosts.host_create(ctx, facts, caps)
        hosts[host_id] = (facts, caps)
    return hosts


def _atom(rng, names, values):
    name = rng.choice(names)
    if rng.random() < 0.2:
        return ['in', '$' + name] + rng.sample(values, 2)
    value = rng.choice(values)
    if rng.random() < 0.3 and filters.as_number(value) is not None:
        value = float(value) if '.' in value else int(value)
    return [rng.choice(filters.COMPARISONS), '$' + name, value]


def random_filter(rng, names, values, depth=0):
    if depth > 2 or rng.random() < 0.4:
        return _atom(rng, names, values)
    op = rng.choice(('and', 'or', 'not'))
    if op == 'not':
        return ['not', random_filter(rng, names, values, depth + 1)]
    return [op] + [random_filter(rng, names, values, depth + 1)
                   for _ in range(rng.randint(1, 3))]


def check(seed=11, rounds=150):
    """Raise AssertionError naming the first filter SQL gets wrong."""
    ctx = context.admin_context()
    rng = random.Random(seed)
    hosts = make_hosts(ctx, rng)
    fact_values = [str(v) for vs in FACTS.values() for v in vs]
    for _ in range(rounds):
        expr = random_filter(rng, NAMES, list(VALUES))
        tree = filters.parse(expr, 'resource_properties')
        got = set(db_hosts.matching_host_ids(
            ctx, db_hosts.host_filter(ctx, None, tree)))
        want = {h for h, (_f, caps) in hosts.items()
                if filters.evaluate(tree, caps)}
        assert got == want, (expr, sorted(got ^ want))
        fact_expr = random_filter(rng, list(FACTS), fact_values)
        tree = filters.parse(fact_expr, 'hypervisor_properties',
                             db_hosts.FACTS)
        got = set(db_hosts.matching_host_ids(
            ctx, db_hosts.host_filter(ctx, tree, None)))
        want = {h for h, (facts, _c) in hosts.items()
                if filters.evaluate(tree, facts)}
        assert got == want, (fact_expr, sorted(got ^ want))
