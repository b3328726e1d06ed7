"""No network segment booked twice, through the API under concurrency:
300 competing ``network`` lease creates from 20 threads on two managers,
over random overlapping windows, each asking one segment matching a
``resource_properties`` filter (some also a ``network_properties`` one)
over ``$physical_network``, ``$network_type``, ``$segment_id`` and extra
capabilities, so that requests compete for overlapping subsets of the
segments, on MariaDB and PostgreSQL.

The segments are registered through ``POST /v1/networks`` (admin,
Blazar's 1.0 shapes, no microversion) with the static inventory
(``[networks] inventory = static``, the default): 6 VLANs of physnet1, 4
of physnet2, 3 VXLAN VNIs, one flat physnet3, with ``site`` and ``speed``
capabilities; and a 15th VLAN of physnet1 made not reservable (``PUT``),
which only a request naming it matches.  Each segment is a ledger
provider with one ``NETWORK_SEGMENT`` of total 1.

Afterwards:

- a brute-force sweep of ``ledger_bookings`` (every pair of bookings of
  a segment, and ``ledger_sweep``'s instants): no segment is held by two
  bookings at any instant;
- each granted (201) lease holds one reservation with exactly one
  booking, ``NETWORK_SEGMENT = 1`` of a reservable segment matching its
  filters (checked by the test's own predicates, not Climate's
  evaluator) over the lease's window; it stores the segment, and
  ``GET /v1/leases/{id}`` shows it (``segment_id``, ``network_type``,
  ``physical_network``) with the ``network_name`` asked;
- each refusal is classified: no matching segment free (409
  ``NotEnoughNetworksAvailable``, Blazar's sentence, the filters, window
  and the number of matching reservable segments the test counts), no
  reservable segment matching at all (409, "no reservable segment
  matches"), or a deliberately bad body (400 ``MissingParameter``,
  ``MalformedParameter``, ``InvalidInput``), each only for the bodies
  that should get it; every refusal wrote nothing; at most one in 20 "not
  free" refusals still fits in the final bookings or says a segment would
  be free from the very start asked (bookings only grow here: a refusal
  is forced by what is committed, but for the ledger's bounded search
  under contention; on MariaDB the sentence's "from when" reads the
  transaction's snapshot, which may predate a competitor's booking);
- the segment that is not reservable is never booked.

The same run with the ledger's lock removed (in the managers, through a
``sitecustomize``) books a segment twice: the check can fail.
"""

import datetime
import json
import random
import re
import time

import pytest

from climate.tests.functional import concurrency
from climate.tests.functional import ledger_sweep
from climate.tests.functional import procs

CREATES = 300
THREADS = concurrency.THREADS  # 20
RESOURCE_TYPE = 'network'
CLS = 'NETWORK_SEGMENT'


@pytest.fixture(params=procs.MULTI_WRITER_ENGINES)
def db_engine(request):
    # and on a multi-writer Galera cluster, a manager per node
    return request.param


def _vlan(physnet, seg, site, speed):
    return {'network_type': 'vlan', 'physical_network': physnet,
            'segment_id': seg, 'site': site, 'speed': speed}


#: What is registered (POST /v1/networks bodies; site and speed are extra
#: capabilities, text).
SEGMENTS = (
    [_vlan('physnet1', 1000 + i, 'uc' if i <= 3 else 'tacc',
           '100' if i % 2 == 0 else '10') for i in range(1, 7)] +
    [_vlan('physnet2', 2000 + i, 'tacc', '100' if i <= 2 else '10')
     for i in range(1, 5)] +
    [{'network_type': 'vxlan', 'segment_id': 5000 + i, 'site': 'uc',
      'speed': '100' if i == 1 else '10'} for i in range(1, 4)] +
    [{'network_type': 'flat', 'physical_network': 'physnet3', 'site': 'uc',
      'speed': '10'}])
#: Registered, then made not reservable: never booked.
IDLE = _vlan('physnet1', 1099, 'uc', '100')


def _shown(body):
    """The fields of a registered segment as the API shows them."""
    return {'network_type': body['network_type'],
            'physical_network': body.get('physical_network'),
            'segment_id': body.get('segment_id', 0)}


def _props(body):
    """What a filter reads of a segment (fields and capabilities)."""
    props = {k: v for k, v in body.items()}
    props.update(_shown(body))
    return props


#: The requests that may be granted: (resource_properties,
#: network_properties, the test's own predicate over :func:`_props`).
#: None: the field is not sent.
KINDS = [
    ('["==", "$physical_network", "physnet1"]', None,
     lambda p: p['physical_network'] == 'physnet1'),
    ('["=", "$physical_network", "physnet2"]', None,
     lambda p: p['physical_network'] == 'physnet2'),
    ('["and", ["==", "$physical_network", "physnet1"], '
     '["==", "$site", "uc"]]', None,
     lambda p: p['physical_network'] == 'physnet1' and p['site'] == 'uc'),
    ('["==", "$network_type", "vxlan"]', None,
     lambda p: p['network_type'] == 'vxlan'),
    ('["in", "$physical_network", "physnet2", "physnet3"]', None,
     lambda p: p['physical_network'] in ('physnet2', 'physnet3')),
    ('[">=", "$speed", 100]', None, lambda p: int(p['speed']) >= 100),
    ('["or", ["==", "$site", "uc"], [">", "$segment_id", 2002]]', None,
     lambda p: p['site'] == 'uc' or p['segment_id'] > 2002),
    ('["not", ["==", "$network_type", "vlan"]]', None,
     lambda p: p['network_type'] != 'vlan'),
    (None, None, lambda p: True),
    ('["==", "$site", "tacc"]', '["<", "$segment_id", 2000]',
     lambda p: p['site'] == 'tacc' and p['segment_id'] < 2000),
]
#: Deliberately bad bodies, by ``i % 50``: the answer each must get.
BAD = {
    7: 'missing-name',       # 400 MissingParameter
    17: 'bad-filter',        # 400 InvalidInput (unknown operator)
    29: 'bad-name',          # 400 MalformedParameter (a number)
    42: 'no-match',          # 409: no segment of physnet9
    46: 'no-match',          # 409: only the segment not reservable
}
ASKED = r'a network segment matching (?P<asked>.+?) asked from ' \
    r'(?P<start>[\d: -]+) to (?P<end>[\d: -]+) UTC; '
BUSY = re.compile(
    r'Not enough networks available: ' + ASKED + r'(?P<match>\d+) '
    r'reservable segment\(s\) match, none is free over the whole window\. '
    r'(One would be free for as long from (?P<when>[\d: -]+) UTC|None is '
    r'free for as long before [\d: -]+ UTC|(?P<raced>Concurrent requests '
    r'took them meanwhile; try again))\.$')
NO_MATCH = re.compile(
    r'Not enough networks available: ' + ASKED + r'no reservable segment '
    r'matches \(GET /v1/networks lists the segments and their '
    r'capabilities\)\.$')
FMT = '%Y-%m-%d %H:%M:%S'
BUSY_KINDS = ('busy', 'busy-now')


def _body(rng, i, base, prefix):
    """Body ``i`` and the answer it should get: 'ok' (granted or busy) or
    one of :data:`BAD`'s."""
    start = base + datetime.timedelta(minutes=30 * rng.randint(0, 48))
    end = start + datetime.timedelta(minutes=30 * rng.randint(2, 16))
    props, net_props, _pred = KINDS[i % len(KINDS)]
    reservation = {'resource_type': RESOURCE_TYPE,
                   'network_name': '%s-net-%03d' % (prefix, i)}
    if i % 3 == 0:
        reservation['network_description'] = 'lab %d' % i
    if props is not None:
        reservation['resource_properties'] = props
    if net_props is not None:
        reservation['network_properties'] = net_props
    expect = BAD.get(i % 50, 'ok')
    if expect == 'missing-name':
        del reservation['network_name']
    elif expect == 'bad-name':
        reservation['network_name'] = 42
    elif expect == 'bad-filter':
        reservation['resource_properties'] = \
            '["like", "$physical_network", "phys%"]'
    elif i % 50 == 42:
        reservation['resource_properties'] = \
            '["==", "$physical_network", "physnet9"]'
    elif i % 50 == 46:
        reservation['resource_properties'] = \
            '["and", ["==", "$physical_network", "physnet1"], ' \
            '["==", "$segment_id", 1099]]'
    if expect != 'ok':
        reservation.pop('network_properties', None)
    return {'name': '%s-%03d' % (prefix, i), 'events': [],
            'start_date': procs.iso(start), 'end_date': procs.iso(end),
            'reservations': [reservation]}, expect


def _bodies(base, rng, prefix='net'):
    return [_body(rng, i, base, prefix) for i in range(CREATES)]


def _predicate(i):
    return KINDS[i % len(KINDS)][2]


def _index(name):
    return int(name.rsplit('-', 1)[1])


def _asked_text(reservation):
    """How the refusal names the filters asked."""
    return ' and '.join(
        '%s %s' % (f, reservation[f])
        for f in ('resource_properties', 'network_properties')
        if reservation.get(f)) or 'any segment'


def _classify(body, resp, reservable):
    """What the answer to ``body`` says: 'granted', 'busy' ('busy-now'
    when the sentence says a segment is free from the start asked),
    'no-match',
    one of the 400s of :data:`BAD`, or 'error' (500); an answer of any
    other shape is a failure."""
    if resp.status_code == 201:
        return 'granted'
    if resp.status_code == 500:
        return 'error'
    error = resp.json()
    name, message = error.get('error_name'), error.get('error_message') or ''
    assert error.get('error_code') == resp.status_code, resp.text
    asked = body['reservations'][0]
    if resp.status_code == 409 and name == 'NotEnoughNetworksAvailable':
        window = [w.strftime(FMT) for w in concurrency.window_of(body)]
        found = NO_MATCH.match(message)
        if found:
            assert [found['asked'], found['start'], found['end']] == \
                [_asked_text(asked)] + window, (body, resp.text)
            return 'no-match'
        found = BUSY.match(message)
        pred = _predicate(_index(body['name']))
        assert found and [found['asked'], found['start'], found['end'],
                          int(found['match'])] == \
            [_asked_text(asked)] + window + [
                sum(1 for s in reservable if pred(_props(s)))] and (
            found['when'] is None or found['when'] >= window[0]), \
            (body, resp.text)
        # refused over a window the search finds free: the ledger's rounds
        # went to segments concurrent requests took under the lock (said
        # so, never "free from the start asked"); counted with the
        # refusals that still fit in the end
        assert found['when'] != window[0], (body, resp.text)
        return 'busy-now' if found['raced'] else 'busy'
    if resp.status_code == 400:
        if name == 'MissingParameter' and message.startswith(
                'Missing parameter network_name.'):
            return 'missing-name'
        if name == 'MalformedParameter' and message.startswith(
                'Malformed parameter network_name.'):
            return 'bad-name'
        if name == 'InvalidInput' and message.startswith(
                'Invalid input: resource_properties[0]: unknown operator'):
            return 'bad-filter'
    raise AssertionError('unclassified answer to %s: %s' % (body, resp.text))


def _check_granted(db, granted, shown, by_provider):
    """Each granted lease holds exactly one reservable segment matching
    its filters over its window, stores it and its GET shows it.  Returns
    the problems."""
    found = concurrency.holdings(db)
    problems = []
    for name, body in sorted(granted.items()):
        entry = found.get(name)
        if entry is None or len(entry.reservations) != 1:
            problems.append((name, 'reservations', entry))
            continue
        asked = body['reservations'][0]
        window = concurrency.window_of(body)
        if entry.window != window:
            problems.append((name, 'lease window', entry.window, window))
            continue
        segment = by_provider.get(entry.bookings[0].provider) \
            if len(entry.bookings) == 1 else None
        if segment is None or \
                (entry.bookings[0].cls, entry.bookings[0].amount,
                 entry.bookings[0].start, entry.bookings[0].end) != \
                (CLS, 1) + window or \
                not _predicate(_index(name))(_props(segment)):
            problems.append((name, 'bookings', asked, entry.bookings,
                             segment))
            continue
        want = _shown(segment)
        stored = next(iter(entry.reservations.values()))
        if {k: stored.get(k) for k in want} != want or \
                stored.get('network_name') != asked['network_name']:
            problems.append((name, 'stored', stored, want))
            continue
        res = shown[name]['reservations']
        if len(res) != 1 or res[0].get('resource_type') != RESOURCE_TYPE or \
                {k: res[0].get(k) for k in want} != want or \
                res[0].get('network_name') != asked['network_name'] or \
                (res[0].get('resource_properties') or '') != \
                (asked.get('resource_properties') or ''):
            problems.append((name, 'GET', res, want))
    return problems


def _would_fit(name, body, reservable, segment_of, by_provider):
    """Whether the refused ``body`` fits in the final bookings: some
    reservable segment matching it is free over its whole window."""
    start, end = concurrency.window_of(body)
    pred = _predicate(_index(name))
    for provider, segment in segment_of.items():
        if segment in reservable and pred(_props(segment)) and not any(
                s < end and start < e
                for s, e, _n in by_provider.get(provider, ())):
            return True
    return False


@pytest.mark.parametrize('locking', [True, False],
                         ids=['locked', 'lock-removed'])
def test_competing_network_reservations_never_book_a_segment_twice(
        climate, tmp_path, locking):
    cluster = climate.start(
        managers=2, api_threads=8,
        pythonpath=concurrency.pythonpath(tmp_path, locking))
    db = climate.database
    admin = climate.client()  # Blazar's 1.0 API: no microversion
    segment_of = {}  # provider id: registration body
    ids = {}
    for body in SEGMENTS + [IDLE]:
        net = admin.request('POST', '/v1/networks', expect=(201,),
                            json=body).json()['network']
        assert {k: net.get(k) for k in _shown(body)} == _shown(body) and \
            (net['site'], net['speed'], net['reservable']) == \
            (body['site'], body['speed'], True), (body, net)
        segment_of['network_segment:%s' % net['id']] = body
        ids[id(body)] = net['id']
    idle = admin.request('PUT', '/v1/networks/%s' % ids[id(IDLE)],
                         json={'values': {'reservable': False}}
                         ).json()['network']
    assert idle['reservable'] is False, idle
    listed = admin.request('GET', '/v1/networks').json()['networks']
    assert sorted(n['id'] for n in listed) == sorted(ids.values())
    # each segment is a provider of one NETWORK_SEGMENT of total 1
    inventory = sorted(
        (r.provider_id, r.provider_kind, r.resource_class, r.total,
         r.reserved, float(r.allocation_ratio)) for r in db.query(
            'SELECT provider_id, provider_kind, resource_class, total, '
            'reserved, allocation_ratio FROM ledger_inventories'))
    assert inventory == sorted(
        (p, 'network_segment', CLS, 1, 0, 1.0) for p in segment_of), inventory
    reservable = SEGMENTS
    # each request kind competes for 3 to 14 of the 14 segments
    sizes = [sum(1 for s in reservable if pred(_props(s)))
             for _r, _n, pred in KINDS]
    assert min(sizes) >= 3 and max(sizes) == len(reservable), sizes

    base = procs.utcnow().replace(microsecond=0, second=0) + \
        datetime.timedelta(days=30)
    answers = concurrency.answers(locking, 400, 409, database=db)

    def create(client, item):
        body, _expect = item
        resp = client.request('POST', '/v1/leases', expect=answers,
                              json=body)
        lease = resp.json()['lease'] if resp.status_code == 201 else None
        return body['name'], _classify(body, resp, reservable), lease

    began = time.monotonic()
    items = _bodies(base, random.Random(53))
    outcomes = concurrency.run(cluster.url, create, items)
    took = time.monotonic() - began
    first_round = [kind for _n, kind, _l in outcomes]

    def more(extra):
        # without the lock a race is likely, not certain: more rounds over
        # the same windows, while no segment is booked twice yet
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
             if kind not in ((('granted',) + BUSY_KINDS
                              if by_name[name][1] == 'ok'
                              else (by_name[name][1],)) + ('error',))]

    # what a granted lease shows on its next read
    shown = dict(concurrency.run(
        cluster.url, lambda client, item: (item[0], client.request(
            'GET', '/v1/leases/%s' % item[1]['id']).json()['lease']),
        sorted(created.items())))

    over, rows = ledger_sweep.overbooked(db.engine)
    by_provider = concurrency.bookings_by_provider(db, CLS)
    pairs = concurrency.overlapping_pairs(by_provider)
    problems = _check_granted(db, granted, shown, segment_of)
    idle_booked = len(by_provider.get(
        'network_segment:%s' % ids[id(IDLE)], ()))
    others = db.scalar(
        "SELECT count(*) FROM ledger_bookings WHERE resource_class <> "
        "'NETWORK_SEGMENT' OR amount <> 1 OR provider_id NOT LIKE "
        "'network_segment:%'")
    fitting = [name for name, kind, _l in outcomes if kind in BUSY_KINDS and
               _would_fit(name, by_name[name][0], reservable, segment_of,
                          by_provider)]
    free_now = [name for name, kind, _l in outcomes if kind == 'busy-now']
    busy = sum(first_round.count(k) for k in BUSY_KINDS)
    per_kind = [0] * len(KINDS)
    for name in granted:
        per_kind[_index(name) % len(KINDS)] += 1
    holder = {n: p for p, held in by_provider.items() for _s, _e, n in held}
    types = {}
    for name in granted:
        kind = segment_of[holder[name]]['network_type'] \
            if holder.get(name) in segment_of else None
        types[kind] = types.get(kind, 0) + 1
    answered = {}
    for _n, kind, _l in outcomes:
        answered[kind] = answered.get(kind, 0) + 1
    print('\n%s, lock %s: %d creates (%d round(s)) from %d threads, the '
          'first in %.1fs -> %s; granted by kind %s, by type %s; %d busy '
          'refusals would fit in the end, %d said free from the start; '
          '%d booking rows, %d overbooked '
          'instants, %d pairs of bookings of one segment overlapping %s' % (
              db.engine_name, 'on' if locking else 'off', len(outcomes),
              rounds, THREADS, took, answered, per_kind, types, len(fitting),
              len(free_now), rows, len(over), len(pairs),
              [(json.dumps(_shown(segment_of[p[0]])),) + p[1:]
               for p in pairs[:3]]))

    # every 201 holds its segment, every refusal wrote nothing
    assert wrong == [], wrong[:10]
    concurrency.assert_only_granted_written(db, granted)
    assert set(created) == set(granted)
    assert problems == [], problems[:10]
    assert others == 0, 'bookings other than NETWORK_SEGMENT = 1'
    assert idle_booked == 0, 'the segment not reservable was booked'
    # the two brute-force checks agree (every booking is NETWORK_SEGMENT =
    # 1 of a segment of total 1: above 1 is two overlapping bookings)
    assert bool(over) == bool(pairs), (over[:5], pairs[:5])
    # real contention: grants and refusals, every kind of request granted
    assert first_round.count('granted') >= 40, first_round.count('granted')
    assert busy >= 80, busy
    assert min(per_kind) >= 2, per_kind
    assert set(types) == {'vlan', 'vxlan', 'flat'}, types
    if locking:
        assert {k: first_round.count(k) for k in set(BAD.values())} == {
            'missing-name': 6, 'bad-filter': 6, 'bad-name': 6,
            'no-match': 12}, first_round
        assert 'error' not in answered, answered
        # a refusal is forced by what is booked: only a few may still fit
        # in the end (the ledger's search gives up after PLACE_ROUNDS
        # rounds of providers taken meanwhile)
        assert len(set(fitting) | set(free_now)) <= sum(
            answered.get(k, 0) for k in BUSY_KINDS) // 20, (fitting, free_now)
        assert pairs == [], pairs[:10]
        assert over == [], over[:10]
        assert not cluster.errors_in_logs(), cluster.errors_in_logs()[:20]
    else:
        assert pairs, 'no segment booked twice without the lock: the ' \
                      'test is blind'
