"""The API reference's samples, as the running API answers them.

:data:`SCENARIO` is a conversation with a whole Climate in this process
(``climate.tests.fixtures.ClimateEnvironment``: the API, a manager, a new
SQLite database, no authentication): inventories registered, leases
booked, searched, billed and removed.  Each step that names a sample
leaves its request body (``<sample>-req.json``) and its answer
(``<sample>-resp.json``, or ``.csv``) under ``api-ref/source/samples/``.

``tools/api-ref-samples.py`` writes them; ``climate/tests/unit/
test_api_ref.py`` runs the same conversation and compares each answer
with the committed sample by :func:`shape` (the keys and the kinds of
values, not ids or dates), so a change of what a route answers fails
until the samples are written again.
"""

import dataclasses
import json
import os

from climate.api import microversion
from climate.tests import fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SAMPLES_DIR = os.path.join(ROOT, 'api-ref', 'source', 'samples')
#: The microversion of every step that names none: the latest.
VERSION = microversion.MAX
#: Every date of the conversation is in this year's future: no event
#: runs while it lasts, so its answers do not depend on when it runs.
START = '2090-01-01T00:00:00'
END = '2090-01-01T02:00:00'
#: The inventory steps are the operator's; the rest, a member of
#: ``project-a`` unless a step says otherwise.
ADMIN = 'admin'
MEMBER = 'member'


@dataclasses.dataclass
class Step:
    """One request of the conversation.

    ``path`` and ``body`` may name what earlier answers gave
    (``{lease_id}``): ``save`` maps such names to a function of the
    answer's JSON.
    """

    sample: str  # resource/name of the sample, or None
    method: str
    path: str
    status: int
    body: object = None
    persona: str = MEMBER
    version: str = VERSION
    save: dict = dataclasses.field(default_factory=dict)
    #: Called with what earlier answers gave before the request: writes
    #: what no route writes (the power planner's history).
    before: object = None


#: A past day of power history: the power planner's routes answer what it
#: wrote, and it writes only the past.
POWER_DAY = ('2025-01-01T00:00:00', '2025-01-02T00:00:00')


def _power_history(state):
    """A day of the planner's for the first host: on, off from 02:00 (its
    idle draw read), woken at 07:50 for a booking at 08:00, up 7 minutes
    later."""
    import datetime

    from climate import context
    from climate.db import power as db_power
    ctx = context.admin_context()
    day = datetime.datetime(2025, 1, 1)
    hour = datetime.timedelta(hours=1)
    host_id = int(state['host_id'])
    db_power.set_state(ctx, host_id, db_power.ON, day)
    # its switch read it drawing 212.5 W idle just before the power off
    db_power.set_state(ctx, host_id, db_power.OFF, day + 2 * hour,
                       reading=db_power.Reading(212.5, day + 2 * hour))
    db_power.set_state(ctx, host_id, db_power.WAKING,
                       day + 7 * hour + 50 * hour / 60,
                       need_at=day + 8 * hour)
    db_power.set_state(ctx, host_id, db_power.ON,
                       day + 7 * hour + 57 * hour / 60, boot_seconds=420)


def _lease(name, *reservations, **extra):
    return dict({'name': name, 'start_date': START, 'end_date': END,
                 'reservations': list(reservations), 'events': []}, **extra)


HOST = {'resource_type': 'physical:host', 'min': 1, 'max': 1,
        'hypervisor_properties': '',
        'resource_properties': '["=", "$gpu", "True"]'}
INSTANCES = {'resource_type': 'virtual:instance', 'amount': 2, 'vcpus': 2,
             'memory_mb': 2048, 'disk_gb': 20, 'affinity': False,
             'resource_properties': ''}
VOLUME = {'resource_type': 'virtual:volume', 'size_gb': 40,
          'resource_properties': '["=", "$tier", "gold"]'}


SCENARIO = [
    # -- versions and health ------------------------------------------------
    Step('versions/versions-list', 'GET', '/', 300, persona=None,
         version=None),
    Step('versions/v1-show', 'GET', '/v1/', 200, version=None),
    Step('health/health-get', 'GET', '/v1/health', 200, persona=ADMIN),
    # -- hosts ----------------------------------------------------------------
    Step('hosts/host-create', 'POST', '/v1/os-hosts', 201, persona=ADMIN,
         body={'name': 'compute-1', 'vcpus': 16, 'memory_mb': 65536,
               'local_gb': 400, 'gpu': 'True'},
         save={'host_id': lambda r: r['host']['id']}),
    Step(None, 'POST', '/v1/os-hosts', 201, persona=ADMIN,
         body={'name': 'compute-2', 'vcpus': 16, 'memory_mb': 65536,
               'local_gb': 400}),
    Step(None, 'POST', '/v1/os-hosts', 201, persona=ADMIN,
         body={'name': 'compute-3', 'vcpus': 16, 'memory_mb': 65536,
               'local_gb': 400}),
    Step('hosts/hosts-list', 'GET', '/v1/os-hosts', 200, persona=ADMIN),
    Step('hosts/hosts-list-summary', 'GET', '/v1/os-hosts', 200),
    Step('hosts/host-show', 'GET', '/v1/os-hosts/{host_id}', 200,
         persona=ADMIN),
    Step('hosts/host-update', 'PUT', '/v1/os-hosts/{host_id}', 200,
         persona=ADMIN, body={'values': {'rack': 'r7'}}),
    Step('hosts/host-properties-list', 'GET',
         '/v1/os-hosts/properties?detail=true', 200, persona=ADMIN),
    Step('hosts/host-property-update', 'PATCH',
         '/v1/os-hosts/properties/rack', 200, persona=ADMIN,
         body={'private': True}),
    # -- volume pools, floating IPs, network segments --------------------------
    Step('volume-pools/volume-pool-create', 'POST', '/v1/volume-pools', 201,
         persona=ADMIN,
         body={'name': 'cinder-1@ceph#gold', 'total_capacity_gb': 1000,
               'reserved_percentage': 10,
               'capabilities': {'tier': 'gold'}},
         save={'pool_id': lambda r: r['volume_pool']['id']}),
    Step(None, 'POST', '/v1/volume-pools', 201, persona=ADMIN,
         body={'name': 'cinder-1@lvm#spare', 'total_capacity_gb': 100},
         save={'spare_pool_id': lambda r: r['volume_pool']['id']}),
    Step('volume-pools/volume-pools-list', 'GET', '/v1/volume-pools', 200,
         persona=ADMIN),
    Step('volume-pools/volume-pool-show', 'GET',
         '/v1/volume-pools/{pool_id}', 200, persona=ADMIN),
    Step('volume-pools/volume-pool-update', 'PUT',
         '/v1/volume-pools/{pool_id}', 200, persona=ADMIN,
         body={'total_capacity_gb': 2000}),
    Step('floatingips/floatingip-create', 'POST', '/v1/floatingips', 201,
         persona=ADMIN,
         body={'floating_network_id': 'ext-net',
               'floating_ip_address': '203.0.113.10'},
         save={'fip_id': lambda r: r['floatingip']['id']}),
    Step('floatingips/floatingips-list', 'GET', '/v1/floatingips', 200,
         persona=ADMIN),
    Step('floatingips/floatingip-show', 'GET', '/v1/floatingips/{fip_id}',
         200, persona=ADMIN),
    Step('networks/network-create', 'POST', '/v1/networks', 201,
         persona=ADMIN,
         body={'network_type': 'vlan', 'physical_network': 'physnet1',
               'segment_id': 1001, 'site': 'dc-1'},
         save={'network_id': lambda r: r['network']['id']}),
    Step('networks/networks-list', 'GET', '/v1/networks', 200,
         persona=ADMIN),
    Step('networks/network-show', 'GET', '/v1/networks/{network_id}', 200,
         persona=ADMIN),
    Step('networks/network-update', 'PUT', '/v1/networks/{network_id}', 200,
         persona=ADMIN, body={'values': {'site': 'dc-2'}}),
    # -- rates and quotas, before any lease ------------------------------------
    Step('billing/rates-update', 'PUT', '/v1/billing/rates', 200,
         persona=ADMIN,
         body={'currency': 'EUR', 'lease_fee': 0.5,
               'hourly': {'VCPU': 0.02, 'MEMORY_MB': 0.00001,
                          'VOLUME_GB': 0.001},
               'advance_premium': {'after_hours': 24, 'factor': 1.25}}),
    Step('billing/rates-show', 'GET', '/v1/billing/rates', 200),
    Step('quotas/quota-update', 'PUT', '/v1/quotas/project-a', 200,
         persona=ADMIN,
         body={'max_lease_duration': 7 * 86400,
               'max_concurrent': {'VCPU': 64}}),
    Step('quotas/quotas-list', 'GET', '/v1/quotas', 200, persona=ADMIN),
    # -- leases ---------------------------------------------------------------
    Step('leases/lease-create', 'POST', '/v1/leases', 201,
         body=_lease('lab', HOST, INSTANCES, VOLUME,
                     lease_type='scheduled'),
         save={'lease_id': lambda r: r['lease']['id']}),
    Step(None, 'POST', '/v1/leases', 201,
         body=_lease('scratch', {'resource_type': 'noop'}),
         save={'scratch_id': lambda r: r['lease']['id']}),
    Step('leases/leases-list', 'GET', '/v1/leases?limit=1&sort_key=name',
         200),
    Step('leases/lease-show', 'GET', '/v1/leases/{lease_id}', 200),
    Step('leases/lease-update', 'PUT', '/v1/leases/{lease_id}', 200,
         body={'name': 'lab-extended', 'prolong_for': '1h'}),
    # a temporary hold (1.14), confirmed, then gone before what follows
    # counts the leases
    Step('leases/lease-hold', 'POST', '/v1/leases', 201,
         body=_lease('trial', {'resource_type': 'noop'}, hold_for=600),
         save={'hold_id': lambda r: r['lease']['id']}),
    Step('leases/lease-confirm', 'POST', '/v1/leases/{hold_id}/confirm',
         200),
    Step(None, 'DELETE', '/v1/leases/{hold_id}', 204),
    Step('quotas/quota-show', 'GET', '/v1/quotas/project-a', 200),
    # -- what is booked -------------------------------------------------------
    Step('hosts/host-allocations-list', 'GET', '/v1/os-hosts/allocations',
         200, persona=ADMIN),
    Step('hosts/host-allocation-show', 'GET',
         '/v1/os-hosts/{host_id}/allocation', 200, persona=ADMIN),
    Step('hosts/hosts-power-list', 'GET', '/v1/os-hosts/power', 200,
         persona=ADMIN, before=_power_history),
    Step('hosts/host-power-show', 'GET', '/v1/os-hosts/{host_id}/power'
         '?start=%s&end=%s' % POWER_DAY, 200, persona=ADMIN),
    Step('volume-pools/volume-pool-allocations-list', 'GET',
         '/v1/volume-pools/allocations', 200, persona=ADMIN),
    # -- availability ---------------------------------------------------------
    Step('hosts/hosts-availability', 'POST', '/v1/os-hosts/availability',
         200, body={'count': 2, 'duration': '2h', 'earliest_start': START,
                    'limit': 2}),
    Step('hosts/hosts-timeline', 'POST', '/v1/os-hosts/timeline', 200,
         body={'time_from': START, 'time_to': '2090-01-01T06:00:00'}),
    Step('instances/instances-availability', 'POST',
         '/v1/instances/availability', 200,
         body={'amount': 4, 'vcpus': 2, 'memory_mb': 2048, 'disk_gb': 20,
               'duration': '1h', 'earliest_start': START, 'limit': 2}),
    Step('volumes/volumes-availability', 'POST', '/v1/volumes/availability',
         200, body={'size_gb': 500, 'duration': '1h',
                    'resource_properties': '["=", "$tier", "gold"]',
                    'earliest_start': START, 'limit': 2}),
    # -- usage and billing ----------------------------------------------------
    Step('usage/usage-get', 'GET',
         '/v1/usage?start=2090-01-01T00:00:00&end=2090-01-02T00:00:00'
         '&by_lease=true', 200),
    Step('usage/usage-capacity', 'GET',
         '/v1/usage/capacity?start=2090-01-01T00:00:00'
         '&end=2090-01-01T03:00:00&step=1h&resource_class=VCPU', 200,
         persona=ADMIN),
    Step('usage/usage-energy', 'GET',
         '/v1/usage/energy?start=%s&end=%s&step=12h' % POWER_DAY, 200,
         persona=ADMIN),
    Step('billing/billing-get', 'GET',
         '/v1/billing?start=2090-01-01T00:00:00&end=2090-01-02T00:00:00',
         200),
    Step('billing/billing-get-csv', 'GET',
         '/v1/billing?start=2090-01-01T00:00:00&end=2090-01-02T00:00:00'
         '&format=csv', 200),
    # -- errors, as every route answers them ----------------------------------
    Step('errors/not-found', 'GET', '/v1/leases/no-such-lease', 404),
    Step('errors/invalid-input', 'POST', '/v1/leases', 400,
         body={'name': 'bad', 'start_date': START, 'end_date': END,
               'reservations': [{'resource_type': 'noop'}],
               'colour': 'red'}),
    Step('errors/forbidden', 'GET', '/v1/os-hosts/{host_id}', 403),
    Step('errors/needs-microversion', 'GET', '/v1/usage', 404,
         version='1.7'),
    Step('errors/version-not-acceptable', 'GET', '/v1/leases', 406,
         version='9.0'),
    Step('errors/method-not-allowed', 'DELETE', '/v1/leases', 405),
    Step('errors/conflict', 'DELETE', '/v1/os-hosts/{host_id}', 409,
         persona=ADMIN),
    # -- idle reclaim (1.17): a project's policy
    Step('idle-policies/idle-policy-set', 'PUT',
         '/v1/idle-policies/project-a', 200, persona=ADMIN,
         body={'warn_after': 21600, 'end_after': 32400,
               'resource_types': ['physical:host']}),
    Step('idle-policies/idle-policy-show', 'GET',
         '/v1/idle-policies/project-a', 200),
    Step('idle-policies/idle-policies-list', 'GET', '/v1/idle-policies',
         200, persona=ADMIN),
    Step(None, 'DELETE', '/v1/idle-policies/project-a', 204,
         persona=ADMIN),
    # -- a maintenance window (1.16): the plan over the lab lease's host,
    # then one applied the next day, which hits nothing
    Step('maintenance/maintenance-plan', 'POST', '/v1/maintenance-windows',
         200, persona=ADMIN,
         body={'name': 'bmc-firmware', 'start_date': '2090-01-01T01:00:00',
               'end_date': '2090-01-01T05:00:00', 'hosts': ['compute-1'],
               'reason': 'BMC firmware upgrade', 'dry_run': True}),
    Step('maintenance/maintenance-create', 'POST',
         '/v1/maintenance-windows', 201, persona=ADMIN,
         body={'name': 'bmc-firmware', 'start_date': '2090-01-02T01:00:00',
               'end_date': '2090-01-02T05:00:00', 'hosts': ['compute-1'],
               'reason': 'BMC firmware upgrade'},
         save={'window_id': lambda r: r['maintenance_window']['id']}),
    Step('maintenance/maintenance-list', 'GET', '/v1/maintenance-windows',
         200, persona=ADMIN),
    Step('maintenance/maintenance-show', 'GET',
         '/v1/maintenance-windows/{window_id}', 200, persona=ADMIN),
    Step(None, 'DELETE', '/v1/maintenance-windows/{window_id}', 204,
         persona=ADMIN),
    # -- a recurring series (1.15): its first occurrence within the horizon
    Step('lease-series/series-create', 'POST', '/v1/lease-series', 201,
         body=_lease('seminar', {'resource_type': 'noop'},
                     recurrence={'rrule': 'FREQ=WEEKLY;COUNT=10',
                                 'timezone': 'Europe/Paris',
                                 'on_conflict': 'skip'}),
         save={'series_id': lambda r: r['lease_series']['id']}),
    Step('lease-series/series-list', 'GET', '/v1/lease-series', 200),
    Step('lease-series/series-show', 'GET', '/v1/lease-series/{series_id}',
         200),
    Step('lease-series/series-update', 'PUT',
         '/v1/lease-series/{series_id}', 200,
         body={'from_occurrence': 1, 'start_date': '2090-01-01T01:00:00',
               'end_date': '2090-01-01T03:00:00'}),
    Step(None, 'DELETE', '/v1/lease-series/{series_id}', 204),
    # -- removal --------------------------------------------------------------
    Step(None, 'DELETE', '/v1/leases/{scratch_id}', 204),
    Step(None, 'POST', '/v1/os-hosts', 201, persona=ADMIN,
         body={'name': 'compute-4'},
         save={'spare_host_id': lambda r: r['host']['id']}),
    Step(None, 'DELETE', '/v1/os-hosts/{spare_host_id}', 204, persona=ADMIN),
    Step(None, 'DELETE', '/v1/volume-pools/{spare_pool_id}', 204,
         persona=ADMIN),
    Step(None, 'DELETE', '/v1/floatingips/{fip_id}', 204, persona=ADMIN),
    Step(None, 'DELETE', '/v1/quotas/project-a', 204, persona=ADMIN),
    # -- webhooks, once no lease changes: nothing is ever delivered ----------
    Step('webhooks/webhook-create', 'POST', '/v1/webhooks', 201,
         body={'url': 'https://203.0.113.7/climate-notices',
               'secret': 'a-secret-of-some-length',
               'event_types': ['notification']},
         save={'webhook_id': lambda r: r['webhook']['id']}),
    Step('webhooks/webhooks-list', 'GET', '/v1/webhooks', 200),
    Step('webhooks/webhook-show', 'GET', '/v1/webhooks/{webhook_id}', 200),
    Step('webhooks/webhook-deliveries', 'GET',
         '/v1/webhooks/{webhook_id}/deliveries', 200),
    Step(None, 'DELETE', '/v1/webhooks/{webhook_id}', 204),
]


class ScenarioFailed(AssertionError):
    pass


def _fill(value, state):
    if isinstance(value, str):
        return value.format(**state)
    if isinstance(value, dict):
        return {k: _fill(v, state) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, state) for v in value]
    return value


def _pretty(data):
    return json.dumps(data, indent=4, sort_keys=True) + '\n'


def run(env):
    """Run :data:`SCENARIO` against ``env`` (a started
    ClimateEnvironment): ``{sample file (relative): text}``."""
    state, samples = {}, {}
    for step in SCENARIO:
        if step.before is not None:
            step.before(state)
        path = _fill(step.path, state)
        body = _fill(step.body, state)
        resp = env.request(step.method, path, body=body,
                           persona=step.persona, version=step.version)
        if resp.status_int != step.status:
            raise ScenarioFailed('%s %s answered %s, not %d: %s' % (
                step.method, path, resp.status, step.status, resp.text))
        if step.sample is None:
            pass
        elif resp.content_type == 'text/csv':
            samples[step.sample + '-resp.csv'] = resp.text
        elif resp.body:
            samples[step.sample + '-resp.json'] = _pretty(resp.json)
        if step.sample is not None and body is not None:
            samples[step.sample + '-req.json'] = _pretty(body)
        for name, pick in step.save.items():
            state[name] = pick(resp.json)
    return samples


def capture():
    """The samples of a run on a new environment."""
    with fixtures.ClimateEnvironment() as env:
        return run(env)


def shape(value):
    """What a sample says, less its values: the keys of each object and
    the kind of each value (``null`` and a value alike, as a field that
    has none yet shows).  A list's items are merged into one shape."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        merged = {}
        for item in value:
            merged = _merge(merged, shape(item))
        return [merged] if value else []
    return 'value'


def _merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _merge(a.get(k, {}), b.get(k, {})) if k in a and k in b
                else a.get(k, b.get(k)) for k in set(a) | set(b)}
    return b if a in ({}, 'value') else a


def shape_of_text(name, text):
    """:func:`shape` of a sample file's text (a CSV: its header line)."""
    if name.endswith('.csv'):
        return text.splitlines()[0] if text else ''
    return shape(json.loads(text))
