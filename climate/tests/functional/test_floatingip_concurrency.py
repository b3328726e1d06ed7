"""No floating IP address booked twice, through the API under
concurrency: 300 competing ``virtual:floatingip`` lease creates from 20
threads on two managers, over random overlapping windows, for 1 to 4
addresses of one of two external networks (some naming addresses in
``required_floatingips``), on MariaDB and PostgreSQL.

The addresses are registered through ``POST /v1/floatingips`` (admin,
Blazar's 1.0 shapes, no microversion) with the static inventory
(``[floatingips] inventory = static``, the default): 14 IPv4 addresses
of one network, 16 IPv6 ones of the other (half of them sent in a long
uppercase form, stored canonical), and 3 of a third network no request
names.  Each address is a ledger provider with one ``FLOATING_IP`` of
total 1.

Afterwards:

- a brute-force sweep of ``ledger_bookings`` (every pair of bookings of
  an address, and ``ledger_sweep``'s instants): no address is held by two
  bookings at any instant;
- each granted (201) lease holds one reservation whose bookings are
  exactly ``amount`` distinct addresses of its network, its required ones
  among them, each ``FLOATING_IP = 1`` over the lease's window; it
  stores them, and ``GET /v1/leases/{id}`` shows them in ``floatingips``
  (numeric order), with its ``network_id``, ``amount`` and
  ``required_floatingips``;
- each refusal is classified: addresses not free (400
  ``NotEnoughFloatingIPAvailable``, Blazar's status, the sentence naming
  the amount, network, window and the network's size), a required
  address of another network (400 ``NotEnoughFloatingIPAvailable``, "not
  registered") or an unknown network (400 ``FloatingIPNetworkNotFound``),
  each only for the bodies that should get it; every refusal wrote
  nothing; at most one in 20 "not free" refusals still fits in the final
  bookings (bookings only grow here: a refusal is forced by what is
  committed, but for the ledger's bounded search under contention);
- the third network's addresses are never booked.

The same run with the ledger's lock removed (in the managers, through a
``sitecustomize``) books an address twice: the check can fail.
"""

import datetime
import ipaddress
import random
import re
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

CREATES = 300
THREADS = concurrency.THREADS  # 20
RESOURCE_TYPE = 'virtual:floatingip'
NET_A = '3b7a5e0c-5d0a-4d2e-9a61-0f4c2a1b7e01'
NET_B = '3b7a5e0c-5d0a-4d2e-9a61-0f4c2a1b7e02'
NET_IDLE = '3b7a5e0c-5d0a-4d2e-9a61-0f4c2a1b7e03'
#: Named by some bodies, never registered.
NET_UNKNOWN = '3b7a5e0c-5d0a-4d2e-9a61-0f4c2a1b7eff'
#: The registered addresses (canonical) of each network.
NETWORKS = {
    NET_A: ['203.0.113.%d' % i for i in range(10, 24)],
    NET_B: [str(ipaddress.ip_address('2001:db8:fe::10') + i)
            for i in range(16)],
    NET_IDLE: ['198.51.100.%d' % i for i in range(1, 4)],
}
BUSY = re.compile(
    r'Not enough floating IPs available: (?P<asked>\d+) floating IP\(s\) '
    r'asked on network (?P<network>\S+) from (?P<start>[\d: -]+) to '
    r'(?P<end>[\d: -]+) UTC; (required address\(es\) (?P<busy>[^;]+?) '
    r'(is|are) booked by another lease then(; |\.))?((?P<free>\d+) of the '
    r'(?P<size>\d+) (other )?reservable address\(es\) it could take are '
    r'free over the whole window\b)?')
UNREGISTERED = 'Not enough floating IPs available. required_floatingips: '
UNKNOWN_NETWORK = 'Failed to find network %s. ' % NET_UNKNOWN
FMT = '%Y-%m-%d %H:%M:%S'


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    # and on a multi-writer Galera cluster, a manager per node
    return request.param


def _long_form(address):
    """The uppercase, fully written form of an IPv6 address (the API
    stores it canonical); IPv4 unchanged."""
    ip = ipaddress.ip_address(address)
    return ip.exploded.upper() if ip.version == 6 else address


def _in_order(addresses):
    return sorted(addresses, key=lambda a: (ipaddress.ip_address(a).version,
                                            int(ipaddress.ip_address(a))))


def _body(rng, i, base, prefix):
    """Body ``i`` and the answer it should get: 'ok' (granted or not
    free), 'unregistered' or 'unknown-network'."""
    start = base + datetime.timedelta(minutes=30 * rng.randint(0, 48))
    end = start + datetime.timedelta(minutes=30 * rng.randint(2, 16))
    network, other = (NET_A, NET_B) if i % 2 == 0 else (NET_B, NET_A)
    amount = rng.randint(1, 4)
    reservation = {'resource_type': RESOURCE_TYPE, 'network_id': network,
                   'amount': amount}
    expect = 'ok'
    kind = i % 3
    if kind == 1:
        named = rng.sample(NETWORKS[network], rng.randint(1, min(amount, 2)))
        reservation['required_floatingips'] = [
            _long_form(a) if rng.random() < 0.5 else a for a in named]
    elif kind == 2:
        reservation['required_floatingips'] = []
    if i % 50 == 17:
        # an address of the other network: not registered on this one
        reservation['required_floatingips'] = [rng.choice(NETWORKS[other])]
        expect = 'unregistered'
    elif i % 50 == 42:
        reservation['network_id'] = NET_UNKNOWN
        expect = 'unknown-network'
    return {'name': '%s-%03d' % (prefix, i), 'events': [],
            'start_date': procs.iso(start), 'end_date': procs.iso(end),
            'reservations': [reservation]}, expect


def _bodies(base, rng, prefix='fip'):
    return [_body(rng, i, base, prefix) for i in range(CREATES)]


def _required(reservation):
    return [str(ipaddress.ip_address(a))
            for a in reservation.get('required_floatingips') or []]


def _classify(body, resp):
    """What the answer to ``body`` says: 'granted', 'busy',
    'unregistered', 'unknown-network' or 'error' (500); an answer of any
    other shape is a failure."""
    if resp.status_code == 201:
        return 'granted'
    if resp.status_code == 500:
        return 'error'
    error = resp.json()
    message = error.get('error_message') or ''
    assert error.get('error_code') == resp.status_code == 400, resp.text
    if error.get('error_name') == 'NotEnoughFloatingIPAvailable':
        if message.startswith(UNREGISTERED):
            return 'unregistered'
        found = BUSY.match(message)
        asked = body['reservations'][0]
        window = concurrency.window_of(body)
        required = set(_required(asked))
        # the required addresses booked, and the others counted only when
        # the request takes some of them: what the decision weighed
        assert found and (found['busy'] or found['free']) and (
            int(found['asked']), found['network'], found['start'],
            found['end']) == (
            asked['amount'], asked['network_id'], window[0].strftime(FMT),
            window[1].strftime(FMT)), (body, resp.text)
        if found['busy']:
            assert set(found['busy'].split(', ')) <= required, resp.text
        if found['free']:
            assert int(found['size']) == len(
                NETWORKS[asked['network_id']]) - len(required) and \
                int(found['free']) <= int(found['size']), (body, resp.text)
        return 'busy'
    if error.get('error_name') == 'FloatingIPNetworkNotFound' and \
            message.startswith(UNKNOWN_NETWORK):
        return 'unknown-network'
    raise AssertionError('unclassified answer to %s: %s' % (body, resp.text))


def _bookings_by_address(db):
    """``{address: [(start, end, lease name)]}`` of every FLOATING_IP
    booking, by start."""
    by_address = {}
    for address, name, start, end in db.query(
            'SELECT f.floating_ip_address, l.name, b.start_date, b.end_date '
            'FROM ledger_bookings b JOIN floatingips f ON b.provider_id = '
            "concat('floatingip:', f.id) JOIN leases l ON l.id = "
            "b.lease_id WHERE b.resource_class = 'FLOATING_IP'"):
        by_address.setdefault(address, []).append((start, end, name))
    for held in by_address.values():
        held.sort()
    return by_address


def _check_granted(db, granted, leases, registered):
    """Each granted lease holds exactly ``amount`` distinct addresses of
    its network, its required ones among them, over its window, stores
    them, and its GET shows them.  Returns the problems."""
    address_of = {'floatingip:%s' % fip['id']: fip for fip in registered}
    found = concurrency.holdings(db)
    problems = []
    for name, body in sorted(granted.items()):
        entry = found.get(name)
        if entry is None or len(entry.reservations) != 1:
            problems.append((name, 'reservations', entry))
            continue
        asked = body['reservations'][0]
        required = _required(asked)
        window = concurrency.window_of(body)
        if entry.window != window:
            problems.append((name, 'lease window', entry.window, window))
            continue
        fips = [address_of.get(b.provider) for b in entry.bookings]
        held = _in_order(f['floating_ip_address'] for f in fips if f)
        if len(entry.bookings) != asked['amount'] or None in fips or \
                len(set(held)) != asked['amount'] or \
                any(f['floating_network_id'] != asked['network_id']
                    for f in fips) or \
                any((b.cls, b.amount, b.start, b.end) !=
                    ('FLOATING_IP', 1) + window for b in entry.bookings) or \
                not set(required) <= set(held):
            problems.append((name, 'bookings', asked, entry.bookings))
            continue
        stored = next(iter(entry.reservations.values()))
        if (stored.get('network_id'), stored.get('amount'),
                stored.get('required_floatingips'),
                stored.get('floatingips')) != (
                asked['network_id'], asked['amount'], required, held):
            problems.append((name, 'stored', stored, held))
            continue
        shown = leases[name]['reservations']
        if len(shown) != 1 or (
                shown[0].get('resource_type'), shown[0].get('network_id'),
                int(shown[0].get('amount')),
                shown[0].get('required_floatingips') or [],
                shown[0].get('floatingips')) != (
                RESOURCE_TYPE, asked['network_id'], asked['amount'],
                required, held):
            problems.append((name, 'GET', shown, held))
    return problems


def _would_fit(body, by_address):
    """Whether the refused ``body`` fits in the final bookings
    (:func:`_bookings_by_address`): its required addresses and enough
    others are free over its whole window.  Bookings only grow here, so a
    refusal of a body that still fits was not forced by what was
    committed (it may be the ledger's bounded search giving up under
    contention, or a competitor's booking rolled back)."""
    asked = body['reservations'][0]
    start, end = concurrency.window_of(body)
    required = _required(asked)

    def free(address):
        return not any(s < end and start < e
                       for s, e, _n in by_address.get(address, ()))

    others = [a for a in NETWORKS[asked['network_id']]
              if a not in required and free(a)]
    return all(free(a) for a in required) and \
        len(others) >= asked['amount'] - len(required)


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_competing_floatingip_reservations_never_book_an_address_twice(
        climate, tmp_path, locking):
    cluster = climate.start(
        managers=2, api_threads=8,
        pythonpath=concurrency.pythonpath(tmp_path, locking))
    db = climate.database
    admin = climate.client()  # Blazar's 1.0 API: no microversion
    registered = []
    for network, addresses in NETWORKS.items():
        for i, address in enumerate(addresses):
            sent = _long_form(address) if i % 2 else address
            fip = admin.request('POST', '/v1/floatingips', expect=(201,),
                                json={'floating_network_id': network,
                                      'floating_ip_address': sent}
                                ).json()['floatingip']
            assert (fip['floating_network_id'], fip['floating_ip_address'],
                    fip['reservable']) == (network, address, True), fip
            registered.append(fip)
    listed = admin.request('GET', '/v1/floatingips').json()['floatingips']
    assert sorted(f['id'] for f in listed) == \
        sorted(f['id'] for f in registered)
    # each address is a provider of one FLOATING_IP of total 1
    inventory = sorted(
        (r.provider_id, r.provider_kind, r.resource_class, r.total,
         r.reserved, float(r.allocation_ratio)) for r in db.query(
            'SELECT provider_id, provider_kind, resource_class, total, '
            'reserved, allocation_ratio FROM ledger_inventories'))
    assert inventory == sorted(
        ('floatingip:%s' % f['id'], 'floatingip', 'FLOATING_IP', 1, 0, 1.0)
        for f in registered), inventory
    base = procs.utcnow().replace(microsecond=0, second=0) + \
        datetime.timedelta(days=30)
    answers = concurrency.answers(locking, 400, database=db)

    def create(client, item):
        body, _expect = item
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        lease = resp.json()['lease'] if resp.status_code == 201 else None
        return body['name'], _classify(body, resp), lease

    began = time.monotonic()
    items = _bodies(base, random.Random(41))
    outcomes = concurrency.run(cluster.url, create, items)
    took = time.monotonic() - began
    first_round = [kind for _n, kind, _l in outcomes]

    def more(extra):
        # without the lock a race is likely, not certain: more rounds over
        # the same windows, while no address is booked twice yet
        added = _bodies(base, random.Random(extra), prefix='more%d' % extra)
        items.extend(added)
        outcomes.extend(concurrency.run(cluster.url, create, added))

    rounds = concurrency.more_rounds(db, locking, more)
    by_name = {body['name']: (body, expect) for body, expect in items}
    granted = {name: by_name[name][0] for name, kind, _l in outcomes
               if kind == 'granted'}
    created = {name: lease for name, kind, lease in outcomes if lease}
    # each answer is the one its body may get
    wrong = [(name, by_name[name][1], kind) for name, kind, _l in outcomes
             if kind not in {'ok': ('granted', 'busy', 'error'),
                             'unregistered': ('unregistered', 'error'),
                             'unknown-network': ('unknown-network',
                                                 'error')}[
                 by_name[name][1]]]

    # what a granted lease shows on its next read
    shown = dict(concurrency.run(
        cluster.url, lambda client, item: (item[0], client.request(
            'GET', '/v1/leases/%s' % item[1]['id']).json()['lease']),
        sorted(created.items())))

    over, rows = ledger_sweep.overbooked(db.engine)
    by_address = _bookings_by_address(db)
    pairs = concurrency.overlapping_pairs(by_address)
    problems = _check_granted(db, granted, shown, registered)
    idle = sum(len(by_address.get(a, ())) for a in NETWORKS[NET_IDLE])
    others = db.scalar(
        "SELECT count(*) FROM ledger_bookings WHERE resource_class <> "
        "'FLOATING_IP' OR amount <> 1 OR provider_id NOT LIKE "
        "'floatingip:%'")
    fitting = [name for name, kind, _l in outcomes if kind == 'busy' and
               _would_fit(by_name[name][0], by_address)]
    kinds = {'amount %d' % n: 0 for n in range(1, 5)}
    kinds.update({'required': 0, 'net A': 0, 'net B': 0})
    for body in granted.values():
        asked = body['reservations'][0]
        kinds['amount %d' % asked['amount']] += 1
        kinds['required'] += bool(asked.get('required_floatingips'))
        kinds['net A' if asked['network_id'] == NET_A else 'net B'] += 1
    answered = {}
    for _n, kind, _l in outcomes:
        answered[kind] = answered.get(kind, 0) + 1
    print('\n%s, lock %s: %d creates (%d round(s)) from %d threads, the '
          'first in %.1fs -> %s; granted %s; %d busy refusals would fit in '
          'the end; %d booking rows, %d overbooked instants, %d pairs of '
          'bookings of one address overlapping %s' % (
              db.engine_name, 'on' if locking else 'off', len(outcomes),
              rounds, THREADS, took, answered, kinds, len(fitting), rows,
              len(over), len(pairs), pairs[:3]))

    # every 201 holds its addresses, every refusal wrote nothing
    assert wrong == [], wrong[:10]
    concurrency.assert_only_granted_written(db, granted)
    assert set(created) == set(granted)
    assert problems == [], problems[:10]
    assert others == 0, 'bookings other than FLOATING_IP = 1'
    assert idle == 0, 'an address of a network no request names was booked'
    # the two brute-force checks agree (every booking is FLOATING_IP = 1
    # of an address of total 1: above 1 is two overlapping bookings)
    assert bool(over) == bool(pairs), (over[:5], pairs[:5])
    # real contention: grants and refusals, every kind of request granted
    assert first_round.count('granted') >= 40, first_round.count('granted')
    assert first_round.count('busy') >= 80, first_round.count('busy')
    if locking:
        assert (first_round.count('unregistered'),
                first_round.count('unknown-network')) == (6, 6), first_round
    # (a request naming an address is granted least: 7 to 16 of 100)
    assert kinds['required'] >= 3, kinds
    assert min(v for k, v in kinds.items() if k != 'required') >= 5, kinds
    if locking:
        assert 'error' not in answered, answered
        # a refusal is forced by what is booked: only a few may still fit
        # in the end (the ledger's search gives up after PLACE_ROUNDS
        # rounds of providers taken meanwhile)
        assert len(fitting) <= answered.get('busy', 0) // 20, fitting
        assert pairs == [], pairs[:10]
        assert over == [], over[:10]
        assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
    else:
        assert pairs, 'no address booked twice without the lock: the ' \
                      'test is blind'
