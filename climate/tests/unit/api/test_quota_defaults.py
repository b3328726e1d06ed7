"""Quotas from the configuration alone ([quotas] defaults, no limits of a
project's own): the check makes the project's quota row (its lock) on
the first limited create, refuses beyond the default, and a default that
is no number stops the manager from starting."""

import pytest

from climate import exceptions
from climate.db import models
from climate.manager import quotas
from climate.tests import fixtures


def _volume(env, name, size_gb, project='project-a'):
    body = fixtures.lease_body(name, '2090-01-01 00:00', '2090-01-01 01:00',
                               reservations=[{
                                   'resource_type': 'virtual:volume',
                                   'size_gb': size_gb, 'count': 1}])
    return env.request('POST', '/v1/leases', body=body, project=project)


def test_the_configured_defaults_limit_every_project():
    with fixtures.ClimateEnvironment(overrides=[
            ('max_concurrent', 'quotas', {'VOLUME_GB': '50'})]) as env:
        resp = env.request('POST', '/v1/volume-pools', persona='admin',
                           version='1.5', body={'name': 'n@lvm#lvm',
                                                'total_capacity_gb': 1000})
        assert resp.status_int == 201, resp.text
        assert env.rows(models.ProjectQuota) == []
        assert _volume(env, 'forty', 40).status_int == 201
        # the lock row, made on the first limited create, holds no limits
        [row] = env.rows(models.ProjectQuota)
        assert (row.project_id, row.max_concurrent) == ('project-a', None)
        resp = _volume(env, 'twenty', 20)
        assert resp.status_int == 403, resp.text
        assert 'may hold at most 50 VOLUME_GB at once' in \
            resp.json['error_message']
        # each project has its own 50
        assert _volume(env, 'other', 50, 'project-b').status_int == 201


def test_a_default_that_is_no_number_stops_the_manager():
    env = fixtures.ClimateEnvironment(overrides=[
        ('budget', 'quotas', {'VCPU': 'lots'})])
    env.configure()
    try:
        with pytest.raises(exceptions.ClimateException) as exc:
            quotas.QuotasEndpoint()
        assert str(exc.value) == '[quotas] budget: VCPU=lots is not a number'
    finally:
        env.stop()
