"""The power plan's options: off by default, bounded as the plan needs,
and their defaults are the plan's."""

import datetime

from oslo_config import cfg
import pytest

from climate.conf import power as power_conf
from climate.scheduling import power

S = datetime.timedelta(seconds=1)


def _conf():
    conf = cfg.ConfigOpts()
    power_conf.register_opts(conf)
    conf([], project='climate-test')
    return conf


def test_the_defaults_are_the_plans_and_it_is_off():
    opts = _conf().power
    assert opts.enabled is False
    assert power.Settings() == power.Settings(
        enabled=opts.enabled, min_off=opts.min_off * S,
        wake_margin=opts.wake_margin * S,
        default_boot=opts.default_boot_time * S,
        spare_awake=opts.spare_awake, spare_share=opts.spare_share)


@pytest.mark.parametrize('name, value', [
    ('min_off', 0), ('wake_margin', -1), ('default_boot_time', -1),
    ('spare_awake', -1), ('spare_share', 1.5), ('spare_share', -0.1),
    ('idle_watts', -1.0), ('plan_interval', 0)])
def test_values_the_plan_cannot_use_are_refused(name, value):
    conf = _conf()
    with pytest.raises(ValueError):
        conf.set_override(name, value, group='power')


def test_the_group_is_listed_for_the_sample_file():
    from climate.conf import opts
    names = {opt.name for group, group_opts in opts.list_opts()
             if group == 'power' for opt in group_opts}
    # the plan's and the power backends' (conf/power_backends.py)
    assert {'enabled', 'min_off', 'wake_margin', 'default_boot_time',
            'spare_awake', 'spare_share', 'idle_watts', 'plan_interval',
            'backend', 'action_timeout'} <= names
