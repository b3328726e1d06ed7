"""Bounds of the outage options that the issue fixes."""

from oslo_config import cfg
import pytest

from climate.conf import outages


def _conf():
    conf = cfg.ConfigOpts()
    outages.register_opts(conf)
    conf([], project='climate-test')
    return conf


@pytest.mark.parametrize('seconds', [3600, 86399])
def test_idempotency_keys_are_kept_at_least_a_day(seconds):
    conf = _conf()
    with pytest.raises(ValueError):
        conf.set_override('idempotency_key_ttl', seconds, group='manager')


def test_a_day_of_idempotency_keys_is_accepted():
    conf = _conf()
    conf.set_override('idempotency_key_ttl', 86400, group='manager')
    assert conf.manager.idempotency_key_ttl == 86400
