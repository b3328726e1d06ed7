"""OS::Climate::Lease without Heat: its pairing and update logic, and
the requests it sends, against a fake Climate API.

Heat is not installed in Climate's environment, so minimal stand-ins of
the Heat modules the plugin imports are put in ``sys.modules`` while it is
imported; the module itself is the one heat-engine loads.  The real thing
runs in ``climate/tests/integration/test_heat_climate_lease.py``.
"""

import importlib
import json
import sys
import types

import pytest

MODULE = 'climate.heat_plugin.climate_lease'


class _Schema:
    STRING, LIST, MAP, INTEGER, BOOLEAN = 'string', 'list', 'map', 'int', 'b'

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _Error(Exception):
    def __init__(self, message=None, **kwargs):
        super().__init__(message or kwargs)
        self.kwargs = kwargs


class _Resource:
    def __init__(self, props, data=None):
        self.properties = props
        self._data = dict(data or {})
        self.resource_id = None
        self.name = 'lease'

    def validate(self):
        pass

    def data(self):
        return self._data

    def data_set(self, key, value):
        self._data[key] = value

    def resource_id_set(self, value):
        self.resource_id = value

    def physical_resource_name(self):
        return 'stack-lease-abc'


@pytest.fixture(scope='module')
def plugin():
    names = ('heat', 'heat.common', 'heat.common.config',
             'heat.common.exception', 'heat.common.i18n', 'heat.engine',
             'heat.engine.attributes', 'heat.engine.constraints',
             'heat.engine.properties', 'heat.engine.resource',
             'heat.engine.support')
    fake = {name: types.ModuleType(name) for name in names}
    fake['heat.common.config'].get_client_option = lambda c, o: 'public'
    for err in ('Error', 'StackValidationFailed', 'ResourceInError'):
        setattr(fake['heat.common.exception'], err,
                type(err, (_Error,), {}))
    fake['heat.common.i18n']._ = lambda text: text
    fake['heat.engine.attributes'].Schema = _Schema
    fake['heat.engine.properties'].Schema = _Schema
    fake['heat.engine.constraints'].Length = _Schema
    fake['heat.engine.resource'].Resource = _Resource
    fake['heat.engine.support'].SupportStatus = _Schema
    for name in names:
        parent, _dot, child = name.rpartition('.')
        if parent:
            setattr(fake[parent], child, fake[name])
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(fake)
    try:
        sys.modules.pop(MODULE, None)
        module = importlib.import_module(MODULE)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    yield module
    sys.modules.pop(MODULE, None)


INSTANCE = {'resource_type': 'virtual:instance', 'amount': 1, 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1, 'affinity': False}
FIP = {'resource_type': 'virtual:floatingip', 'network_id': 'net',
       'amount': 1}


def test_pairing_follows_the_template_not_climates_order(plugin):
    made = [
        dict(FIP, id='f', floatingips=['203.0.113.5']),
        # a part of a stack is never one of the template's reservations
        dict(INSTANCE, id='part', stack_reservation_id='s'),
        dict(INSTANCE, id='big', amount=3),
        dict(INSTANCE, id='small', stack_reservation_id=None),
    ]
    big = dict(INSTANCE, amount=3)
    assert plugin.pair_reservations([INSTANCE, FIP, big], made) == [
        'small', 'f', 'big']
    with pytest.raises(ValueError):
        plugin.pair_reservations([INSTANCE, INSTANCE, INSTANCE], made)


def test_changes_carry_only_changed_fields_or_ask_for_a_replacement(plugin):
    ids = ['i', 'f']
    assert plugin.reservation_changes([INSTANCE, FIP], [INSTANCE, FIP],
                                      ids) == []
    assert plugin.reservation_changes(
        [INSTANCE, FIP], [dict(INSTANCE, amount=2), FIP], ids) == [
        {'id': 'i', 'amount': 2}]
    # added, removed, retyped, a field dropped: not an update
    assert plugin.reservation_changes([INSTANCE], [INSTANCE, FIP],
                                      ['i']) is None
    assert plugin.reservation_changes([INSTANCE, FIP], [INSTANCE],
                                      ids) is None
    assert plugin.reservation_changes([INSTANCE, FIP], [FIP, INSTANCE],
                                      ids) is None
    dropped = dict(INSTANCE)
    del dropped['affinity']
    assert plugin.reservation_changes([INSTANCE, FIP], [dropped, FIP],
                                      ids) is None


class _Climate:
    """Climate's API as the resource sees it: records what it is sent."""

    def __init__(self, statuses=('ACTIVE',)):
        self.sent = []
        self.statuses = list(statuses)
        self.lease = {
            'id': 'L', 'status': 'PENDING', 'end_date': 'x',
            'reservations': [dict(FIP, id='f', floatingips=['a1', 'a2']),
                             dict(INSTANCE, id='i', flavor_id='fl')]}

    def __call__(self, method, path, body=None, ok=None):
        self.sent.append((method, path, body))
        resp = types.SimpleNamespace(status_code=200)
        if method == 'GET':
            status = self.statuses.pop(0) if len(self.statuses) > 1 \
                else self.statuses[0]
            lease = dict(self.lease, status=status,
                         status_reason='Nova refused')
            resp.json = lambda: {'lease': lease}
        elif method == 'POST':
            resp.json = lambda: {'lease': self.lease}
        elif method == 'DELETE':
            resp.status_code = self.delete_codes.pop(0)
        return resp


def _resource(plugin, climate, **props):
    values = {'name': None, 'start_date': 'now', 'end_date': '2030-01-01 10:00',
              'before_end_date': None, 'reservations': [INSTANCE, FIP],
              'events': []}
    values.update(props)
    res = plugin.ClimateLease(values)
    res._call = climate
    return res


def test_create_waits_for_an_active_lease_and_answers_in_template_order(
        plugin):
    climate = _Climate(statuses=['PENDING', 'STARTING', 'ACTIVE'])
    res = _resource(plugin, climate)
    assert res.handle_create() == 'L'
    method, path, body = climate.sent[0]
    assert (method, path) == ('POST', '/leases')
    assert body['name'] == 'stack-lease-abc'
    assert body['reservations'] == [INSTANCE, FIP]
    assert 'before_end_date' not in body
    # pending, then starting: not yet; active: done
    assert [res.check_create_complete('L') for _ in range(3)] == [
        False, False, True]
    assert res._resolve_attribute('reservation_ids') == ['i', 'f']
    assert res._resolve_attribute('flavor_ids') == ['fl', None]
    assert res._resolve_attribute('floatingips') == ['a1', 'a2']
    assert res._resolve_attribute('status') == 'ACTIVE'


def test_a_future_lease_is_complete_once_granted(plugin):
    climate = _Climate(statuses=['PENDING'])
    res = _resource(plugin, climate, start_date='2030-01-01 09:00')
    res.handle_create()
    assert res.check_create_complete('L')


def test_a_lease_in_error_fails_the_resource_with_climates_reason(plugin):
    climate = _Climate(statuses=['ERROR'])
    res = _resource(plugin, climate)
    res.handle_create()
    with pytest.raises(Exception) as caught:
        res.check_create_complete('L')
    assert caught.value.kwargs['status_reason'] == 'Nova refused'


def test_update_sends_what_changed_to_the_same_lease(plugin):
    climate = _Climate()
    res = _resource(plugin, climate)
    res.handle_create()
    climate.sent.clear()
    new = [dict(INSTANCE, amount=2), FIP]
    assert not res.needs_replace_with_prop_diff(
        {'reservations', 'end_date'}, {'reservations': new}, {})
    res.handle_update(None, None, {'reservations': new,
                                   'end_date': '2030-01-02 10:00',
                                   'start_date': 'now'})
    assert climate.sent == [('PUT', '/leases/L', {
        'end_date': '2030-01-02 10:00',
        'reservations': [{'id': 'i', 'amount': 2}]})]
    # the next update compares with what this one asked
    assert json.loads(res.data()['requested']) == new
    assert res.check_update_complete(None)


def test_a_new_set_of_reservations_or_events_replaces_the_lease(plugin):
    res = _resource(plugin, _Climate())
    res.handle_create()
    assert res.needs_replace_with_prop_diff(
        {'reservations'}, {'reservations': [INSTANCE]}, {})
    assert res.needs_replace_with_prop_diff({'events'}, {}, {})
    assert not res.needs_replace_with_prop_diff({'name'}, {}, {})


def test_delete_retries_while_climate_is_busy_and_accepts_gone(plugin):
    climate = _Climate()
    climate.delete_codes = [409, 409, 204]
    res = _resource(plugin, climate)
    res.handle_create()
    deleted = res.handle_delete()
    assert deleted is False
    assert res.check_delete_complete(deleted) is False
    assert res.check_delete_complete(False) is True
    climate.delete_codes = [404]
    assert res.handle_delete() is True
    # never created: nothing to delete
    assert _resource(plugin, climate).handle_delete() is None


class _Answer:
    def __init__(self, code, text):
        self.status_code, self.text = code, text

    def json(self):
        return json.loads(self.text)


@pytest.mark.parametrize('code, text, shown', [
    (409, json.dumps({'error_code': 409, 'error_message': 'Not enough '
                      'hosts available.'}), 'Not enough hosts available.'),
    # a proxy's page, not Climate's JSON: shown as it came
    (502, '<html>Bad Gateway</html>', '<html>Bad Gateway</html>'),
    (500, json.dumps(['not', 'a', 'map']), '["not", "a", "map"]'),
])
def test_a_refusal_fails_the_resource_with_what_climate_said(
        plugin, code, text, shown):
    res = plugin.ClimateLease({})
    sent = []

    class _Api:
        def request(self, path, method, json=None, raise_exc=True):
            sent.append((method, path, json, raise_exc))
            return _Answer(code, text)
    res._api = _Api
    with pytest.raises(Exception) as caught:
        res._call('POST', '/leases', {'name': 'x'})
    assert str(caught.value) == 'Climate answered %d: %s' % (code, shown)
    assert sent == [('POST', '/leases', {'name': 'x'}, False)]
    # an answer it expects is handed back
    ok = _Answer(201, '{"lease": {}}')
    res._api = lambda: types.SimpleNamespace(
        request=lambda *args, **kwargs: ok)
    assert res._call('POST', '/leases', {}) is ok
