"""Policy in code: every route has a rule, refusals are 403s naming it,
the sample is generated from the code and an operator's file overrides it.

The personas themselves (reader, member, admin, other project) are walked
through in ``climate/tests/gabbi/gabbits/policy.yaml`` (noauth headers) and
against real Keystone tokens in ``climate/tests/integration``.
"""

import contextlib
import re
import time

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_middleware import request_id
from oslo_policy import _checks as oslo_checks
from oslo_policy import generator
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy
import pytest
import webob
import yaml

from climate.api import app as api_app
from climate.api import middleware
from climate import context
from climate import policies
from climate import policy
from climate import rpc
from climate.tests import fixtures

CONF = cfg.CONF
ANY_ID = '5a6b1d5e-0f0e-4a53-9b43-3c1d8e6a0c11'


def _operations():
    """(rule, method, path) of every documented operation."""
    out = []
    for rule in policies.list_rules():
        for op in getattr(rule, 'operations', None) or []:
            out.append((rule.name, op['method'],
                        re.sub(r'\{[^}]+\}', ANY_ID, op['path'])))
    return out


def test_every_documented_rule_is_project_scoped_and_named():
    documented = [r for r in policies.list_rules()
                  if isinstance(r, oslo_policy.DocumentedRuleDefault)]
    assert documented
    for rule in documented:
        assert rule.scope_types == ['project'], rule.name
        assert rule.name.startswith('climate:'), rule.name
        assert rule.description, rule.name
    names = [r.name for r in policies.list_rules()]
    assert len(names) == len(set(names))


def test_lease_routes_are_all_covered():
    covered = {(method, path.replace(ANY_ID, '{id}'))
               for _rule, method, path in _operations()}
    for route in [('GET', '/v1/leases'), ('POST', '/v1/leases'),
                  ('GET', '/v1/leases/{id}'), ('PUT', '/v1/leases/{id}'),
                  ('DELETE', '/v1/leases/{id}')]:
        assert route in covered


@pytest.fixture(scope='module')
def env():
    with fixtures.ClimateEnvironment() as env:
        yield env


@pytest.mark.parametrize('rule,method,path', _operations())
def test_a_caller_with_no_known_role_gets_403_naming_a_rule(env, rule,
                                                            method, path):
    body = {} if method in ('POST', 'PUT') else None
    resp = env.request(method, path, body=body,
                       headers={'X-Roles': 'observer'}, version='latest')
    assert resp.status_int == 403, resp.text
    assert resp.json['error_name'] == 'PolicyNotAuthorized'
    assert re.search(r"Policy doesn't allow climate:[\w:-]+ to be "
                     r"performed\.", resp.json['error_message'])


def test_system_scoped_token_is_403_not_500(env):
    """oslo.policy raises InvalidScope for a system-scoped caller on a
    project-scoped rule: it must read as a refusal naming the rule."""
    resp = env.request('GET', '/v1/leases', persona='admin',
                       headers={'OpenStack-System-Scope': 'all'})
    assert resp.status_int == 403, resp.text
    assert resp.json['error_message'] == (
        "Policy doesn't allow climate:leases:list to be performed.")


def test_member_cannot_use_the_admin_listing(env):
    resp = env.request('GET', '/v1/leases?project_id=project-b',
                       version='1.1')
    assert resp.status_int == 403
    assert 'climate:leases:list:all_projects' in resp.json['error_message']


def test_sample_policy_file_is_generated_from_the_code(tmp_path):
    out = tmp_path / 'policy.yaml.sample'
    generator._generate_sample(['climate'], output_path=str(out))
    text = out.read_text()
    for rule in policies.list_rules():
        assert '"%s": "%s"' % (rule.name, rule.check_str) in text
    # every line is a comment: the sample changes nothing when copied
    assert yaml.safe_load(text) is None


@contextlib.contextmanager
def _policy_file(path, text):
    """The operator's policy file ``text`` in force inside the block."""
    path.write_text(text)
    policy_opts.set_defaults(CONF)  # registers [oslo_policy] now
    CONF.set_override('policy_file', str(path), group='oslo_policy')
    policy.reset()
    try:
        yield
    finally:
        CONF.clear_override('policy_file', group='oslo_policy')
        policy.reset()


def test_operator_policy_file_overrides_the_defaults(env, tmp_path):
    with _policy_file(tmp_path / 'policy.yaml',
                      '"climate:leases:create": "role:admin"\n'
                      '"climate:leases:get": "role:auditor"\n'):
        body = fixtures.lease_body(name='p', start='2090-01-01 00:00',
                                   end='2090-01-02 00:00')
        resp = env.request('POST', '/v1/leases', body=body)
        assert resp.status_int == 403, resp.text
        assert 'climate:leases:create' in resp.json['error_message']
        resp = env.request('POST', '/v1/leases', body=body, persona='admin')
        assert resp.status_int == 201, resp.text
        lease_id = resp.json['lease']['id']
        # the admin's lease, shown to an auditor of its project only
        headers = {'X-Roles': 'auditor', 'X-Project-Id': 'project-a'}
        assert env.request('GET', '/v1/leases/%s' % lease_id,
                           headers=headers).status_int == 200
        assert env.request('GET', '/v1/leases/%s' % lease_id,
                           persona='admin').status_int == 403
        # rules the file does not name keep their defaults
        assert env.request('GET', '/v1/leases',
                           persona='reader').status_int == 200


class _RecordingManager:
    """Stands for the RPC client: records the context the API built."""

    def __init__(self):
        self.contexts = []

    def list_leases(self, ctx, **query):
        self.contexts.append(ctx)
        return {'leases': '[]', 'count': 0, 'last_id': None}


def test_request_context_carries_the_identity(env):
    manager = _RecordingManager()
    app = api_app.setup_app(manager_api=manager)
    req = webob.Request.blank('/v1/leases')
    gid = 'req-0b4a1d53-1b7e-4f9e-8a3b-3c5e6d7f8a9b'
    for name, value in {'X-User-Id': 'u-1', 'X-Project-Id': 'p-1',
                        'X-Roles': 'member,reader',
                        'X-User-Domain-Id': 'default',
                        'X-Project-Domain-Id': 'dom-p',
                        'X-Auth-Token': 'tok-1',
                        'X-OpenStack-Request-ID': gid}.items():
        req.headers[name] = value
    resp = req.get_response(app)
    assert resp.status_int == 200, resp.text
    (ctx,) = manager.contexts
    assert (ctx.user_id, ctx.project_id) == ('u-1', 'p-1')
    assert sorted(ctx.roles) == ['member', 'reader']
    assert (ctx.user_domain_id, ctx.project_domain_id) == ('default', 'dom-p')
    assert ctx.global_request_id == gid
    assert ctx.request_id == resp.headers['X-OpenStack-Request-ID']
    assert ctx.request_id != gid
    assert ctx.auth_token == 'tok-1'
    assert ctx.is_admin is False
    # and it survives the trip to the manager
    again = rpc.ContextSerializer().deserialize_context(ctx.to_dict())
    assert (again.global_request_id, again.auth_token,
            again.project_domain_id) == (gid, 'tok-1', 'dom-p')


def test_unreadable_policy_file_is_a_refusal_not_a_500(env, tmp_path):
    with _policy_file(tmp_path / 'policy.yaml',
                      '"climate:leases:list": [\n  - x: {\n'):
        resp = env.request('GET', '/v1/leases', persona='admin')
        assert resp.status_int == 403, resp.text
        assert 'climate:leases:list' in resp.json['error_message']
    assert env.request('GET', '/v1/leases').status_int == 200


def test_broken_policy_rule_is_a_refusal(env, tmp_path):
    with _policy_file(tmp_path / 'policy.yaml',
                      '"climate:leases:list": "role:member and ("\n'):
        resp = env.request('GET', '/v1/leases')
        assert resp.status_int == 403, resp.text
        assert 'climate:leases:list' in resp.json['error_message']


def test_log_context_of_a_request_never_is_the_previous_ones():
    """What is logged before the identity is known (keystonemiddleware)
    carries this request's id, not the last user of the worker thread."""
    context.RequestContext(user_id='previous-user', request_id='req-old',
                           overwrite=True)
    seen = []

    def inner(environ, start_response):
        seen.append(oslo_context.get_current())
        start_response('204 No Content', [])
        return []

    app = request_id.RequestId(middleware.RequestLogContext(inner))
    resp = webob.Request.blank('/v1/leases').get_response(app)
    (current,) = seen
    assert current.user_id is None
    assert current.request_id == resp.headers['X-OpenStack-Request-ID']


def test_an_edited_policy_file_takes_effect_without_a_restart(
        env, tmp_path, monkeypatch):
    # the enforcer looks at its files at most every RECHECK_SECONDS
    monkeypatch.setattr(policy, 'RECHECK_SECONDS', 0.2)
    path = tmp_path / 'policy.yaml'
    ctx = context.RequestContext(user_id='u', project_id='p',
                                 roles=['member', 'reader'])
    with _policy_file(path, '"climate:leases:list": "role:reader"\n'):
        assert policy.check(ctx, 'climate:leases:list')
        path.write_text('"climate:leases:list": "role:admin"\n')
        deadline = time.monotonic() + 10
        while policy.check(ctx, 'climate:leases:list'):
            assert time.monotonic() < deadline, 'the edit was never seen'
            time.sleep(0.05)
        path.write_text('"climate:leases:list": "role:member"\n')
        while not policy.check(ctx, 'climate:leases:list'):
            assert time.monotonic() < deadline, 'the edit was never seen'
            time.sleep(0.05)


def test_oslo_policy_argspec_lookups_are_cached():
    # climate.policy replaces the inspect module oslo.policy's checks use:
    # if oslo.policy stops calling it that way, this says so
    assert not hasattr(oslo_checks.inspect, 'signature')
    first = oslo_checks.inspect.getfullargspec(
        oslo_checks.TrueCheck().__call__)
    assert first is oslo_checks.inspect.getfullargspec(
        oslo_checks.TrueCheck().__call__)
    assert first.args[:2] == ['self', 'target']


def test_generic_checks_read_their_literals_once_and_never_compile_at_once(
        monkeypatch):
    """oslo.policy's generic checks parse their left side with
    ast.literal_eval on every check; climate.policy answers it from a
    cache filled one at a time (CPython 3.11 < 3.11.8 fails compile() in
    two threads at once: gh-106905)."""
    import ast
    import threading
    from climate import policy as climate_policy
    assert oslo_checks.ast.literal_eval is climate_policy._literal_eval
    compiled = []
    real = ast.literal_eval
    inside = threading.Semaphore(1)

    def counted(text):
        # the lock must hold: a second compile while one runs fails here
        assert inside.acquire(blocking=False), 'two compiles at once'
        try:
            compiled.append(text)
            time.sleep(0.01)
            return real(text)
        finally:
            inside.release()

    monkeypatch.setattr(climate_policy, '_LITERALS', {})
    monkeypatch.setattr(climate_policy.ast, 'literal_eval', counted)
    errors = []

    def check(kind):
        try:
            for _ in range(20):
                rule = oslo_checks.GenericCheck(kind, 'x')
                rule({'x': 'x'}, {}, None)
        except Exception as exc:  # pragma: no cover - the failure said
            errors.append(exc)

    threads = [threading.Thread(target=check, args=(kind,))
               for kind in ('project_id', "'x'", 'True', 'user.id') * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert errors == []
    # each side parsed once, a literal compared as a literal, a name looked
    # up in the credentials
    assert sorted(compiled) == sorted({'project_id', "'x'", 'True',
                                       'user.id'})
    assert oslo_checks.GenericCheck("'x'", 'x')({'x': 'x'}, {}, None)
    assert not oslo_checks.GenericCheck('project_id', 'x')(
        {'x': 'x'}, {'project_id': 'y'}, None)
    assert oslo_checks.GenericCheck('project_id', '%(x)s')(
        {'x': 'p'}, {'project_id': 'p'}, None)
