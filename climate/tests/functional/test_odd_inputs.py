"""Odd inputs against a real Climate on MariaDB and PostgreSQL: a 4xx,
never a 500, and nothing written.

The inputs issue 16 found answered with 500s ("500s from inputs"): NUL
characters in names and ids (PostgreSQL refuses them in text), unpaired
UTF-16 surrogates (not UTF-8, so no driver encodes them), ids beyond any
integer column, deeply nested JSON on PATCH, a PATCH without the
property's name; and the same kinds of text in every other place a lease
or host route takes text (query strings, capability names and values,
filters).  ``climate/tests/unit/api/test_fuzz.py`` searches the same space
at random on SQLite.
"""

import datetime
import json

import sqlalchemy as sa

from climate.tests.functional import procs

#: Tables the managers write on their own (their heartbeats).
BACKGROUND_TABLES = ('managers', 'alembic_version')

DEEP = '[' * 100000 + ']' * 100000
FAR = procs.utcnow() + datetime.timedelta(days=30)


def _lease(name, reservations=None, **extra):
    body = {'name': name, 'start_date': procs.iso(FAR),
            'end_date': procs.iso(FAR + datetime.timedelta(hours=1)),
            'reservations': reservations or [{'resource_type': 'noop'}],
            'events': []}
    body.update(extra)
    return body


def _host_reservation(resource_properties):
    return [{'resource_type': 'physical:host', 'min': 1, 'max': 1,
             'hypervisor_properties': '',
             'resource_properties': resource_properties}]


def _json(text):
    """A JSON document as bytes, written by hand: ``\\u0000`` and lone
    ``\\ud800`` escapes stay what a client sends."""
    return text.encode('ascii')


#: (method, path, body bytes or None, statuses allowed).
ODD_REQUESTS = [
    # hosts: NUL and surrogates in names, capabilities, ids, queries
    ('POST', '/v1/os-hosts', _json('{"name": "\\u0000"}'), (400,)),
    ('POST', '/v1/os-hosts', _json('{"name": "a\\u0000b"}'), (400,)),
    ('POST', '/v1/os-hosts', _json('{"name": "\\ud800"}'), (400,)),
    ('POST', '/v1/os-hosts', _json('{"name": "h", "\\u0000": "x"}'), (400,)),
    ('POST', '/v1/os-hosts', _json('{"name": "h", "gpu": "\\udfff"}'),
     (400,)),
    ('PUT', '/v1/os-hosts/1', _json('{"rack": "\\u0000"}'), (400,)),
    ('PUT', '/v1/os-hosts/1', _json('{"\\ud800": "x"}'), (400,)),
    ('GET', '/v1/os-hosts/%00', None, (400, 404)),
    ('PUT', '/v1/os-hosts/%00', _json('{"rack": "r1"}'), (400, 404)),
    ('DELETE', '/v1/os-hosts/%00', None, (400, 404)),
    ('GET', '/v1/os-hosts/%ED%A0%80', None, (400, 404)),
    ('GET', '/v1/os-hosts/%00/allocation', None, (400, 404)),
    ('GET', '/v1/os-hosts/allocations?lease_id=%00', None, (400,)),
    ('GET', '/v1/os-hosts/allocations?reservation_id=%ED%A0%80', None,
     (400,)),
    ('GET', '/v1/os-hosts/1/allocation?lease_id=%00', None, (400,)),
    # numbers beyond their column
    ('POST', '/v1/os-hosts', _json('{"name": "h", "vcpus": 2147483648}'),
     (400,)),
    ('POST', '/v1/os-hosts', _json('{"name": "h", "memory_mb": "%s"}' % (
        '9' * 5000)), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease('x', reservations=[dict(
        _host_reservation('')[0], min=2 ** 64, max=2 ** 64)])).encode(),
     (400,)),
    # ids beyond any integer column
    ('GET', '/v1/os-hosts/99999999999999999999', None, (404,)),
    ('DELETE', '/v1/os-hosts/99999999999999999999', None, (404,)),
    ('PUT', '/v1/os-hosts/99999999999999999999', _json('{"a": "b"}'),
     (404,)),
    ('GET', '/v1/os-hosts/99999999999999999999/allocation', None, (404,)),
    ('GET', '/v1/os-hosts/2147483648', None, (404,)),
    ('DELETE', '/v1/os-hosts/-99999999999999999999', None, (404,)),
    # properties: deep nesting on PATCH, no name, odd names
    ('PATCH', '/v1/os-hosts/properties/gpu', DEEP.encode(), (400,)),
    ('PATCH', '/v1/os-hosts/properties', _json('{"private": true}'),
     (404, 405)),
    ('PATCH', '/v1/os-hosts/properties/%00', _json('{"private": true}'),
     (400, 404)),
    ('PATCH', '/v1/os-hosts/properties/%ED%A0%80',
     _json('{"private": true}'), (400, 404)),
    ('PATCH', '/v1/os-hosts/properties/gpu',
     _json('{"private": "\\u0000"}'), (400,)),
    # leases: NUL and surrogates in ids, names, dates, filters, queries
    ('GET', '/v1/leases/%00', None, (400, 404)),
    ('PUT', '/v1/leases/%00', _json('{"name": "x"}'), (400, 404)),
    ('DELETE', '/v1/leases/%00', None, (400, 404)),
    ('GET', '/v1/leases/%ED%A0%80', None, (400, 404)),
    ('GET', '/v1/leases/99999999999999999999', None, (404,)),
    ('GET', '/v1/leases?status=%00', None, (400,)),
    ('POST', '/v1/leases', json.dumps(_lease('\u0000')).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease('\ud800')).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease(
        'x', start_date='2090-01-01 00:00\u0000')).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease('x', reservations=[
        {'resource_type': 'noop\u0000'}])).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease(
        'x', reservations=_host_reservation(
            '["=", "$gpu", "\\u0000"]'))).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease(
        'x', reservations=_host_reservation(
            '["=", "$\\ud800", "1"]'))).encode(), (400,)),
    ('POST', '/v1/leases', json.dumps(_lease(
        'x', reservations=_host_reservation(DEEP))).encode(), (400,)),
    ('POST', '/v1/leases', DEEP.encode(), (400,)),
]


def _rows(database):
    """Every row of every table but the managers' heartbeats."""
    with database.engine.connect() as conn:
        tables = [t for t in sa.inspect(conn).get_table_names()
                  if t not in BACKGROUND_TABLES]
        metadata = sa.MetaData()
        return {table: sorted(repr(tuple(row)) for row in conn.execute(
            sa.Table(table, metadata, autoload_with=conn).select()))
            for table in tables}


def test_odd_inputs_are_refused_and_write_nothing(climate):
    climate.start(managers=1)
    client = climate.client()
    host = client.request('POST', '/v1/os-hosts', expect=(201,), json={
        'name': 'compute-1', 'gpu': 'True'}).json()['host']
    assert host['id'] == '1'
    lease = client.create_lease('held', FAR, FAR + datetime.timedelta(
        hours=1), reservations=_host_reservation('["=", "$gpu", "True"]'))
    before = _rows(climate.database)
    assert before['ledger_bookings'], before

    answers = []
    for method, path, body, allowed in ODD_REQUESTS:
        response = client.request(method, path, expect=range(100, 600),
                                  data=body)
        answers.append((method, path, (body or b'')[:60],
                        response.status_code, response.text[:200]))
        assert _rows(climate.database) == before, (
            '%s %s wrote rows' % (method, path))
    wrong = [a for a, (_m, _p, _b, allowed) in zip(answers, ODD_REQUESTS)
             if a[3] not in allowed]
    assert not wrong, '\n'.join(repr(a) for a in wrong)

    # the service is whole afterwards
    assert client.get_lease(lease['id'])['status'] == 'PENDING'
    shown = client.request('GET', '/v1/os-hosts/1').json()['host']
    assert shown['gpu'] == 'True'


def test_healthcheck_takes_only_get_and_head(climate):
    climate.start(managers=1)
    client = climate.client()
    answers = {method: client.request(method, '/healthcheck',
                                      expect=range(100, 600)).status_code
               for method in ('PUT', 'POST', 'DELETE', 'TRACE', 'PATCH')}
    assert set(answers.values()) <= {404, 405}, answers
    assert client.request('GET', '/healthcheck',
                          expect=range(100, 600)).status_code == 200
