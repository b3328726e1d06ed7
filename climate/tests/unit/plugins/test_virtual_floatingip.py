"""virtual:floatingip through the in-process API on the static inventory
(SQLite): validation (each malformed field a 400 naming it, nothing
written), booking addresses in the ledger (required ones first, never
one address twice over overlapping windows), the refusal's sentence,
pending and active updates, start/end on the backend, and the address
inventory (/v1/floatingips) with its ledger inventory."""

import datetime
import time

import pytest

from climate import context
from climate.db import api as db_api
from climate.db import floatingips as db_fips
from climate.db.ledger import booking as ledger_booking
from climate.db.ledger import inventory
from climate.db import models
from climate import exceptions
from climate.plugins.virtual_floatingip.backends import static
from climate.plugins.virtual_floatingip import plugin as fip_plugin
from climate.tests import fixtures

START, END = '2090-01-01 00:00', '2090-01-01 02:00'
NET = 'ext-net'
ADDRESSES = ('172.24.4.10', '172.24.4.11', '172.24.4.12')


class RecordingBackend(static.StaticFloatingIPBackend):
    """The static backend, recording calls; ``fail`` makes start fail."""

    acts_in_cloud = True

    def __init__(self, conf):
        super().__init__(conf)
        self.calls = []
        self.fail = False

    def start(self, reservation_id, project_id, network_id, addresses):
        self.calls.append(('start', reservation_id, project_id, network_id,
                           [a for a, _s in addresses]))
        if self.fail:
            raise exceptions.CloudUnavailable(service='Neutron',
                                              reason='down')
        return {a: 'fip-%s' % a for a, _s in addresses}

    def end(self, reservation_id, project_id, network_id, addresses):
        self.calls.append(('end', reservation_id, project_id, network_id,
                           list(addresses)))


def _environment():
    environment = fixtures.ClimateEnvironment().start()
    plugin = environment.plugin('virtual:floatingip')
    plugin._backend = RecordingBackend(fip_plugin.CONF)
    environment.backend = plugin._backend
    return environment


@pytest.fixture
def env():
    environment = _environment()
    yield environment
    environment.stop()


@pytest.fixture(scope='class')
def refusing_env():
    """One Climate for the refusals, which write nothing (each test
    checks it): the addresses of :data:`ADDRESSES` registered."""
    environment = _environment()
    register(environment)
    yield environment
    environment.stop()


def admin(env, method, path, body=None, expect=200):
    resp = env.request(method, path, body=body, persona='admin')
    assert resp.status_int == expect, resp.text
    return resp.json if resp.body else None


def register(env, *addresses, network=NET):
    return [admin(env, 'POST', '/v1/floatingips',
                  {'floating_network_id': network,
                   'floating_ip_address': a}, expect=201)['floatingip']
            for a in addresses or ADDRESSES]


def fips(amount=1, network=NET, **extra):
    return dict(resource_type='virtual:floatingip', network_id=network,
                amount=amount, **extra)


def lease(env, name, *reservations, start=START, end=END, expect=201):
    body = {'name': name, 'start_date': start, 'end_date': end,
            'events': [], 'reservations': list(reservations)}
    resp = env.request('POST', '/v1/leases', body=body)
    if expect is not None:
        assert resp.status_int == expect, resp.text
    return resp.json.get('lease') or resp.json


def get(env, lease_id):
    return env.request('GET', '/v1/leases/' + lease_id).json['lease']


def addresses(env, lease_id):
    return get(env, lease_id)['reservations'][0]['floatingips']


def booked():
    """``{address: [(start, end)]}`` of every booking."""
    ctx = context.admin_context()
    out = {}
    with db_api.reader(ctx) as session:
        names = {db_fips.provider(r.id): r.floating_ip_address
                 for r in session.query(models.FloatingIP).all()}
        for b in session.query(models.LedgerBooking).all():
            out.setdefault(names[b.provider_id], []).append(
                (b.start_date, b.end_date))
    return out


def unchanged(env):
    return env.snapshot(), sorted(booked().items()), sorted(
        (f.id, f.floating_ip_address) for f in env.rows(models.FloatingIP))


# -- validation ---------------------------------------------------------------

BAD = [
    ({'network_id': None}, 'network_id', 'Missing parameter network_id.'),
    ({'amount': None}, 'amount', 'Missing parameter amount.'),
    ({'amount': 0}, 'amount', 'Malformed parameter amount.'),
    ({'amount': -1}, 'amount', 'Malformed parameter amount.'),
    ({'amount': 'two'}, 'amount', 'Malformed parameter amount.'),
    ({'amount': True}, 'amount', 'Malformed parameter amount.'),
    ({'amount': 2 ** 31}, 'amount', 'Malformed parameter amount.'),
    ({'network_id': 7}, 'network_id', 'Malformed parameter network_id.'),
    ({'network_id': 'x' * 256}, 'network_id',
     'Malformed parameter network_id.'),
    ({'required_floatingips': '172.24.4.10'}, 'required_floatingips',
     'Malformed parameter required_floatingips.'),
    ({'required_floatingips': ['172.24.4.300']}, 'required_floatingips[0]',
     'IP address 172.24.4.300 is invalid form.'),
    ({'required_floatingips': [5]}, 'required_floatingips[0]',
     'IP address 5 is invalid form.'),
    ({'amount': 2, 'required_floatingips': ['172.24.4.10', '172.24.4.10']},
     'required_floatingips', 'lists 172.24.4.10 twice'),
    ({'required_floatingips': ['172.24.4.10', '172.24.4.11']},
     'required_floatingips',
     'Invalid values for required_floatingips and amount. The amount must '
     'be equal to or longer than length of required_floatingips.'),
    ({'colour': 'red'}, 'colour',
     'colour: not a virtual:floatingip parameter'),
    ({'floatingips': ['172.24.4.10']}, 'floatingips',
     'floatingips is set by Climate'),
    # known to the request's checks, not to the inventory
    ({'network_id': 'no-such-net'}, 'network_id',
     'Failed to find network no-such-net. network_id: no floating IP of '
     'network no-such-net is registered'),
    ({'required_floatingips': ['10.9.9.9']}, 'required_floatingips',
     'Not enough floating IPs available. required_floatingips: 10.9.9.9 '
     'is not registered on network ext-net'),
]


BAD_REGISTRATIONS = [
    ({}, 'Missing parameter floating_network_id,floating_ip_address.'),
    ({'floating_network_id': NET},
     'Missing parameter floating_ip_address.'),
    ({'floating_network_id': NET, 'floating_ip_address': '1.2.3'},
     'IP address 1.2.3 is invalid form. floating_ip_address is not an '
     'IPv4 or IPv6 address.'),
    ({'floating_network_id': ['x'], 'floating_ip_address': '1.2.3.4'},
     'Malformed parameter floating_network_id.'),
    ({'floating_network_id': NET, 'floating_ip_address': '1.2.3.4',
      'subnet_id': 's'}, 'subnet_id: not a field of a floating IP'),
]


class TestRefusals:
    """Refusals write nothing (each test checks it): one Climate for them
    all (a class's fixture ends with the class, before any other test's
    Climate starts)."""

    @pytest.mark.parametrize('extra,field,sentence', BAD,
                             ids=[repr(b[0])[:40] for b in BAD])
    def test_each_malformed_field_is_a_400_naming_it(
            self, refusing_env, extra, field, sentence):
        env = refusing_env
        before = unchanged(env)
        body = dict(fips(), **extra)
        body = {k: v for k, v in body.items() if v is not None}
        answer = lease(env, 'bad', body, expect=400)
        assert sentence in answer['error_message'], answer
        assert field in answer['error_message']
        assert unchanged(env) == before

    @pytest.mark.parametrize('body,sentence', BAD_REGISTRATIONS)
    def test_bad_registrations_are_400s(self, refusing_env, body,
                                        sentence):
        before = unchanged(refusing_env)
        answer = admin(refusing_env, 'POST', '/v1/floatingips', body,
                       expect=400)
        assert sentence in answer['error_message'], answer
        assert unchanged(refusing_env) == before


def test_required_addresses_are_read_in_canonical_form(env):
    register(env, '2001:db8::10', '2001:db8::11', network='v6')
    made = lease(env, 'v6', fips(network='v6', required_floatingips=[
        '2001:DB8:0::10']))
    assert made['reservations'][0]['required_floatingips'] == [
        '2001:db8::10']
    assert addresses(env, made['id']) == ['2001:db8::10']


# -- booking ------------------------------------------------------------------

def test_required_addresses_first_then_any_free_one(env):
    register(env)
    made = lease(env, 'a', fips(2, required_floatingips=['172.24.4.12']))
    res = made['reservations'][0]
    assert (res['network_id'], res['amount'], res['required_floatingips'],
            res['resource_id']) == (NET, 2, ['172.24.4.12'], res['id'])
    mine = addresses(env, made['id'])
    assert len(mine) == 2 and '172.24.4.12' in mine
    # the one left goes to an overlapping lease, then none is
    other = lease(env, 'b', fips(1), start='2090-01-01 01:00',
                  end='2090-01-01 03:00')
    assert addresses(env, other['id']) == sorted(
        set(ADDRESSES) - set(mine))
    lease(env, 'c', fips(1), start='2090-01-01 01:30',
          end='2090-01-01 01:45', expect=400)
    # after the window every address is free again
    later = lease(env, 'd', fips(3), start='2090-01-01 03:00',
                  end='2090-01-01 04:00')
    assert addresses(env, later['id']) == list(ADDRESSES)


def test_no_address_is_ever_booked_twice(env):
    register(env)
    windows = [('2090-01-01 00:00', '2090-01-01 02:00'),
               ('2090-01-01 01:00', '2090-01-01 03:00'),
               ('2090-01-01 01:59', '2090-01-01 02:01'),
               ('2090-01-01 02:00', '2090-01-01 04:00'),
               ('2090-01-01 00:30', '2090-01-01 05:00')]
    for i, (start, end) in enumerate(windows * 3):
        lease(env, 'l%d' % i, fips(1 + i % 2), start=start, end=end,
              expect=None)
    for address, spans in booked().items():
        spans.sort()
        for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
            assert e1 <= s2, (address, spans)


def test_the_refusal_says_what_is_free_and_from_when(env):
    register(env)
    lease(env, 'first', fips(2, required_floatingips=['172.24.4.10']))
    answer = lease(env, 'second', fips(2), start='2090-01-01 01:00',
                   end='2090-01-01 03:00', expect=400)
    assert answer['error_name'] == 'NotEnoughFloatingIPAvailable'
    assert answer['error_message'] == (
        'Not enough floating IPs available: 2 floating IP(s) asked on '
        'network ext-net from 2090-01-01 01:00:00 to 2090-01-01 03:00:00 '
        'UTC; 1 of the 3 reservable address(es) it could take are free '
        'over the whole window. It would fit for as long from 2090-01-01 '
        '02:00:00 UTC.')
    answer = lease(env, 'third', fips(
        1, required_floatingips=['172.24.4.10']), start='2090-01-01 01:00',
        end='2090-01-01 01:30', expect=400)
    assert answer['error_message'] == (
        'Not enough floating IPs available: 1 floating IP(s) asked on '
        'network ext-net from 2090-01-01 01:00:00 to 2090-01-01 01:30:00 '
        'UTC; required address(es) 172.24.4.10 is booked by another lease '
        'then. It would fit for as long from 2090-01-01 02:00:00 UTC.')
    # the required address is free, the others are not: the sentence
    # counts it free
    answer = lease(env, 'fourth', fips(
        2, required_floatingips=['172.24.4.10', '172.24.4.12']),
        start='2090-01-01 02:00', end='2090-01-01 03:00', expect=None)
    assert 'id' in answer, answer
    answer = lease(env, 'fifth', fips(
        3, required_floatingips=['172.24.4.11']), start='2090-01-01 02:30',
        end='2090-01-01 03:30', expect=400)
    assert ('3 floating IP(s) asked on network ext-net from 2090-01-01 '
            '02:30:00 to 2090-01-01 03:30:00 UTC; 0 of the 2 other '
            'reservable address(es) it could take are free over the whole '
            'window. It would fit for as long from 2090-01-01 03:00:00 UTC.'
            ) in answer['error_message'], answer
    assert lease(env, 'never', fips(4), expect=400)[
        'error_message'].endswith(
        'It never fits: the network has 3 reservable address(es) besides '
        'the required ones, 4 asked.')


def test_the_refusal_never_counts_free_what_the_request_cannot_take(env):
    """Issue 39's kind: the decision needs every required address free
    and ``amount`` less them of the others; the refusal counts the same
    way, never the free others toward a busy required address."""
    register(env)
    lease(env, 'first', fips(1, required_floatingips=['172.24.4.10']))
    answer = lease(env, 'second', fips(
        2, required_floatingips=['172.24.4.10']), expect=400)
    message = answer['error_message']
    assert 'required address(es) 172.24.4.10 is booked by another lease ' \
        'then; 2 of the 2 other reservable address(es) it could take are ' \
        'free over the whole window.' in message, message
    assert 'of the 3' not in message


def taken_first_by(monkeypatch, other):
    """Make every booking find its first provider just booked by the
    lease ``other`` (a concurrent request between the search and the
    lock)."""
    other_res = other['reservations'][0]['id']
    book = ledger_booking.book

    def concurrent(session, res_id, lease_id, requests, start, end,
                   *args, **kwargs):
        if res_id != other_res:
            book(session, other_res, other['id'], requests[:1], start, end)
        return book(session, res_id, lease_id, requests, start, end,
                    *args, **kwargs)

    monkeypatch.setattr(ledger_booking, 'book', concurrent)


def test_the_refusal_leaves_out_addresses_taken_under_the_lock(
        env, monkeypatch):
    """An address found free by the search and booked by a concurrent
    request before the lock (simulated: booked by another lease just
    then) is not counted free."""
    register(env)
    other = lease(env, 'other', fips(1), start='2091-01-01 00:00',
                  end='2091-01-01 01:00')
    taken_first_by(monkeypatch, other)
    answer = lease(env, 'refused', fips(1), expect=400)
    assert answer['error_message'].endswith(
        '; 0 of the 3 reservable address(es) it could take are free over '
        'the whole window (3 taken meanwhile by concurrent requests). It '
        'would fit for as long from 2090-01-01 02:00:00 UTC.'), answer


def test_unreservable_addresses_are_not_offered(env):
    made = register(env, '10.0.0.1', '10.0.0.2', network='n')
    with db_api.writer(context.admin_context()) as session:
        session.get(models.FloatingIP, made[0]['id']).reservable = False
    assert addresses(env, lease(env, 'a', fips(1, network='n'))['id']) == [
        '10.0.0.2']
    answer = lease(env, 'b', fips(1, network='n', required_floatingips=[
        '10.0.0.1']), start='2091-01-01 00:00', end='2091-01-02 00:00',
        expect=400)
    assert 'required address(es) 10.0.0.1 is not reservable' in answer[
        'error_message']


# -- updates ------------------------------------------------------------------

def put(env, lease_id, body, expect=200, timeout=5):
    """PUT the lease (again while an event of it is running)."""
    deadline = time.monotonic() + timeout
    while True:
        resp = env.request('PUT', '/v1/leases/' + lease_id, body=body)
        if 'is running; try again' not in resp.text or \
                time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert resp.status_int == expect, resp.text
    return resp.json


def test_pending_updates_move_resize_or_refuse(env):
    register(env)
    made = lease(env, 'a', fips(1, required_floatingips=['172.24.4.11']))
    res_id = made['reservations'][0]['id']
    # moved: the same address while it stays free
    put(env, made['id'], {'start_date': '2090-01-02 00:00',
                          'end_date': '2090-01-02 02:00'})
    assert addresses(env, made['id']) == ['172.24.4.11']
    assert booked()['172.24.4.11'] == [(datetime.datetime(2090, 1, 2),
                                        datetime.datetime(2090, 1, 2, 2))]
    put(env, made['id'], {'reservations': [{'id': res_id, 'amount': 3}]})
    assert addresses(env, made['id']) == list(ADDRESSES)
    put(env, made['id'], {'reservations': [{'id': res_id, 'amount': 1}]})
    assert addresses(env, made['id']) == ['172.24.4.11']
    # required ones may be emptied, not changed
    answer = put(env, made['id'], {'reservations': [
        {'id': res_id, 'required_floatingips': ['172.24.4.10']}]},
        expect=400)
    assert answer['error_message'].startswith(
        'Floating IP reservation cannot be updated with requested '
        'parameters. Updating required_floatingips is not supported except '
        'with an empty list.')
    answer = put(env, made['id'], {'reservations': [
        {'id': res_id, 'network_id': 'other'}]}, expect=400)
    assert 'Updating network_id is not supported' in answer['error_message']
    put(env, made['id'], {'reservations': [
        {'id': res_id, 'required_floatingips': [],
         'floatingips': ['172.24.4.11']}]})
    # an overlapping lease takes two; growing past the third is a 400
    # naming the reservation, and changes nothing
    lease(env, 'b', fips(2), start='2090-01-02 01:00',
          end='2090-01-02 03:00')
    before = unchanged(env)
    answer = put(env, made['id'], {'reservations': [
        {'id': res_id, 'amount': 2}]}, expect=400)
    assert 'cannot change reservation %s' % res_id in answer[
        'error_message']
    assert unchanged(env) == before
    # moved where its address is taken: it takes another one
    other = lease(env, 'c', fips(1, required_floatingips=['172.24.4.11']),
                  start='2090-01-03 00:00', end='2090-01-03 02:00')
    assert addresses(env, other['id']) == ['172.24.4.11']
    put(env, made['id'], {'start_date': '2090-01-03 00:00',
                          'end_date': '2090-01-03 01:00'})
    assert addresses(env, made['id']) in (['172.24.4.10'],
                                          ['172.24.4.12'])


def wait_for(env, lease_id, status, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        found = get(env, lease_id)
        if found['status'] == status or time.monotonic() > deadline:
            assert found['status'] == status, found
            return found
        time.sleep(0.1)


def _soon(seconds):
    return (datetime.datetime.utcnow() + datetime.timedelta(
        seconds=seconds)).strftime('%Y-%m-%d %H:%M:%S')


def test_active_grows_at_once_never_shrinks_and_ends(env):
    register(env)
    # (ends when the test shortens it: a fixed end a few seconds ahead came
    # before the checks did on a loaded machine)
    made = lease(env, 'now', fips(1, required_floatingips=['172.24.4.12']),
                 start='now', end=_soon(600))
    res_id = made['reservations'][0]['id']
    wait_for(env, made['id'], 'ACTIVE')
    assert ('start', res_id, 'project-a', NET, ['172.24.4.12']) in \
        env.backend.calls
    # growing makes the new address at once
    put(env, made['id'], {'reservations': [{'id': res_id, 'amount': 2}]})
    grown = addresses(env, made['id'])
    assert len(grown) == 2 and '172.24.4.12' in grown
    new = [a for a in grown if a != '172.24.4.12']
    assert env.backend.calls[-1] == ('start', res_id, 'project-a', NET, new)
    answer = put(env, made['id'], {'reservations': [
        {'id': res_id, 'amount': 1}]}, expect=409)
    assert answer['error_name'] == 'CantUpdateFloatingIPReservation'
    assert answer['error_message'] == (
        'Floating IP reservation cannot be updated with requested '
        'parameters. Cannot remove allocations from an active reservation. '
        'Reservation %s is active and holds 2 floating IP(s) (%s), which '
        'may be in use: amount may grow, not drop to 1; shorten the lease '
        '(end_date) to give them back earlier.' % (res_id,
                                                   ', '.join(grown)))
    # a cloud failure while growing leaves the lease as it was, and takes
    # back what it made
    env.backend.fail = True
    before = unchanged(env)
    answer = put(env, made['id'], {'reservations': [
        {'id': res_id, 'amount': 3}]}, expect=503)
    assert unchanged(env) == before
    last = [a for a in ADDRESSES if a not in grown]
    assert env.backend.calls[-1] == ('end', res_id, 'project-a', NET, last)
    env.backend.fail = False
    put(env, made['id'], {'end_date': _soon(2)})
    wait_for(env, made['id'], 'TERMINATED')
    assert ('end', res_id, 'project-a', NET, grown) in env.backend.calls
    assert booked() == {}


def test_a_deleted_lease_frees_its_addresses(env):
    register(env)
    made = lease(env, 'a', fips(3))
    assert len(booked()) == 3
    assert env.request('DELETE', '/v1/leases/' + made['id']).status_int == 204
    assert booked() == {}


# -- the inventory ------------------------------------------------------------

def _inventory():
    with db_api.reader(context.admin_context()) as session:
        return {p: {c: inv.total for c, inv in held.items()}
                for p, held in inventory.inventories_of(
                    session, kind=db_fips.KIND).items()}


def test_registration_writes_the_ledger_and_is_blazar_shaped(env):
    made = register(env, '172.24.4.10')[0]
    assert sorted(made) == ['created_at', 'floating_ip_address',
                            'floating_network_id', 'id', 'reservable',
                            'subnet_id', 'updated_at']
    assert (made['floating_network_id'], made['floating_ip_address'],
            made['subnet_id'], made['reservable'], made['updated_at']) == (
        NET, '172.24.4.10', None, True, None)
    assert _inventory() == {'floatingip:' + made['id']: {'FLOATING_IP': 1}}
    assert admin(env, 'GET', '/v1/floatingips/' + made['id']) == {
        'floatingip': made}
    assert admin(env, 'GET', '/v1/floatingips') == {'floatingips': [made]}
    # the same address of the same network again: 409, nothing written
    answer = admin(env, 'POST', '/v1/floatingips', {
        'floating_network_id': NET, 'floating_ip_address': '172.24.4.10'},
        expect=409)
    assert answer['error_message'] == (
        'Floating IP 172.24.4.10 of network %s is already in the inventory '
        '(id %s).' % (NET, made['id']))
    assert len(_inventory()) == 1
    # the same address of another network is another one
    register(env, '172.24.4.10', network='other')
    assert len(_inventory()) == 2


def test_delete_is_refused_while_booked(env):
    made = register(env, '172.24.4.10')[0]
    booking = lease(env, 'a', fips(1))
    answer = admin(env, 'DELETE', '/v1/floatingips/' + made['id'],
                   expect=409)
    assert answer['error_message'] == (
        "Can't delete floating IP {0}. Floating IP id {0} is allocated by "
        'reservations. Address 172.24.4.10 of network ext-net is booked '
        'until 2090-01-01 02:00:00 UTC at least, by reservation(s) {1}; it '
        'can leave the inventory once they are over.'.format(
            made['id'], booking['reservations'][0]['id']))
    env.request('DELETE', '/v1/leases/' + booking['id'])
    admin(env, 'DELETE', '/v1/floatingips/' + made['id'], expect=204)
    assert _inventory() == {}
    answer = admin(env, 'GET', '/v1/floatingips/' + made['id'], expect=404)
    assert answer['error_message'] == (
        'Floating IP %s not found. No floating IP of the inventory has this '
        'id.' % made['id'])


def test_what_the_plugin_keeps_of_a_network_follows_its_registrations(env):
    """The plugin keeps a network's addresses while the inventory version
    stays the same: an address registered or removed since is seen by
    the next request."""
    first = register(env, '172.24.4.10')[0]
    lease(env, 'a', fips(1, required_floatingips=['172.24.4.10']),
          end='2090-01-01 00:30')
    answer = lease(env, 'b', fips(1, required_floatingips=['172.24.4.11']),
                   expect=400)
    assert '172.24.4.11 is not registered' in answer['error_message']
    register(env, '172.24.4.11')
    made = lease(env, 'c', fips(2, required_floatingips=['172.24.4.11']),
                 start='2090-01-01 00:30')
    assert addresses(env, made['id']) == ['172.24.4.10', '172.24.4.11']
    env.request('DELETE', '/v1/leases/' + made['id'])
    for lease_id in [l['id'] for l in env.request(
            'GET', '/v1/leases').json['leases']]:
        env.request('DELETE', '/v1/leases/' + lease_id)
    admin(env, 'DELETE', '/v1/floatingips/' + first['id'], expect=204)
    answer = lease(env, 'd', fips(1, required_floatingips=['172.24.4.10']),
                   expect=400)
    assert '172.24.4.10 is not registered' in answer['error_message']
