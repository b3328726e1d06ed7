"""Stack reservations (``virtual:stack``) from the command line, against
a running climate-all (static inventories): ``climate lease-create
--stack-template FILE --stack-parameter k=v ...`` books the template's
needs as parts of the lease."""

import datetime
import json
import time
import uuid

ISO = '%Y-%m-%dT%H:%M:%S'

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 1}
resources:
  data:
    type: OS::Cinder::Volume
    properties: {size: {get_param: size}}
  net:
    type: OS::Neutron::Net
"""


def _later(**delta):
    return (datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) + datetime.timedelta(**delta)).strftime(ISO)


def test_a_stack_lease_from_a_template_file(cli, tmp_path):
    tag = uuid.uuid4().hex[:8]
    pool = 'node@lvm#stack-%s' % tag
    done = cli('volume-pool-create', pool, '--total-capacity-gb', '100',
               '-f', 'json')
    assert done.code == 0, done
    template = tmp_path / 'stack.yaml'
    template.write_text(TEMPLATE)
    environment = tmp_path / 'env.yaml'
    environment.write_text('parameter_defaults: {size: 2}\n')
    done = cli('lease-create', 'stack-%s' % tag, '--stack-template',
               template, '--stack-environment', environment,
               '--parameter', 'size=3', '--stack-name', 'db-%s' % tag,
               '--stack-on-end', 'snapshot', '--start-date',
               _later(hours=60), '--end-date', _later(hours=61),
               '-f', 'json')
    assert done.code == 0, done
    reservations = json.loads(done.out)['reservations']
    [stack] = [r for r in reservations
               if r['resource_type'] == 'virtual:stack']
    [volume] = [r for r in reservations
                if r['resource_type'] == 'virtual:volume']
    # the explicit parameter wins over the environment's default
    assert volume['size_gb'] == 3
    assert volume['stack_reservation_id'] == stack['id']
    assert (stack['stack_name'], stack['on_end'], stack['parameters']) == (
        'db-%s' % tag, 'snapshot', {'size': '3'})
    assert stack['free'] == [{'resource': 'net',
                              'type': 'OS::Neutron::Net'}]
    # lease-show tells the stack's status and outputs once it started
    done = cli('lease-create', 'now-%s' % tag, '--stack-template',
               template, '--end-date', _later(hours=1), '-f', 'json')
    assert done.code == 0, done
    deadline = time.monotonic() + 20
    while True:
        shown = json.loads(cli('lease-show', 'now-%s' % tag, '-f',
                               'json').out)
        if shown['status'] == 'ACTIVE' or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert shown['status'] == 'ACTIVE', shown
    [started] = [r for r in shown['reservations']
                 if r['resource_type'] == 'virtual:stack']
    assert started['stack_status'] == 'CREATE_COMPLETE', started
    assert started['stack_id'] and started['outputs'] == [], started
    table = cli('lease-show', 'now-%s' % tag).out
    assert 'stack_status=CREATE_COMPLETE' in table, table
    assert 'template=<2 resources>' in table, table
    assert 'heat_template_version' not in table, table
    for name in ('stack-%s' % tag, 'now-%s' % tag):
        done = cli('lease-delete', name)
        assert done.code == 0, done
    done = cli('volume-pool-delete', pool)
    assert done.code == 0, done


def test_stack_options_need_a_template_and_nothing_is_a_usage_error(
        cli, tmp_path):
    done = cli('lease-create', 'x', '--stack-parameter', 'a=b')
    assert done.code != 0
    assert '--stack-parameter needs --stack-template.' in done.err, done
    done = cli('lease-create', 'x')
    assert done.code != 0
    assert 'Nothing to reserve' in done.err, done
    done = cli('lease-create', 'x', '--stack-template',
               tmp_path / 'missing.yaml')
    assert done.code != 0
    assert '--stack-template' in done.err and 'cannot be read' in \
        done.err, done
    template = tmp_path / 't.yaml'
    template.write_text(TEMPLATE)
    done = cli('lease-create', 'x', '--stack-template', template,
               '--stack-parameter', 'novalue')
    assert done.code != 0
    assert "--stack-parameter takes key=value, not 'novalue'." in \
        done.err, done
