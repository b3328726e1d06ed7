"""``climate quota-*`` (microversion 1.9) against a running climate-all:
an administrator limits a project, its member sees the limits and is
refused a lease beyond them, the limits go back to the defaults."""

import json
import uuid


def test_quota_commands(cli):
    tag = uuid.uuid4().hex[:8]
    project = 'quota-%s' % tag

    done = cli('quota-set', project, '--max-lease-duration', '2h',
               '--max-concurrent', 'VCPU=64', '--max-concurrent', 'HOST=-1',
               '--budget', 'VOLUME_GB=100.5', '--budget-period', 'week',
               '-f', 'json')
    assert done.code == 0, done
    quota = json.loads(done.out)
    assert quota['max_lease_duration'] == 7200
    assert quota['max_concurrent'] == {'VCPU': 64}
    assert quota['own']['max_concurrent'] == {'VCPU': 64, 'HOST': -1}
    assert quota['budget'] == {'VOLUME_GB': 100.5}
    assert quota['budget_period'] == 'week'

    # the project's member sees them, and is held to them
    done = cli('quota-show', project, '-f', 'json', project=project)
    assert done.code == 0, done
    assert json.loads(done.out)['max_lease_duration'] == 7200
    done = cli('lease-create', 'too-long-%s' % tag, '--reservation',
               'resource_type=noop', '--start-date', '2095-01-01 00:00',
               '--end-date', '2095-01-01 03:00', project=project)
    assert done.code == 1
    assert ('Quota exceeded: leases of project %s may last at most 7200 s '
            '(2:00:00); this one would last 10800 s (3:00:00).' % project
            in done.err), done
    assert '(HTTP 403)' in done.err, done
    # but not another project's, nor set them
    done = cli('quota-show', 'someone-else', project=project)
    assert done.code == 1 and '(HTTP 403)' in done.err, done
    done = cli('quota-set', project, '--max-extension', '1h',
               project=project)
    assert done.code == 1 and '(HTTP 403)' in done.err, done

    done = cli('quota-list', '-f', 'json')
    assert done.code == 0, done
    rows = {r['project_id']: r for r in json.loads(done.out)}
    assert rows['(defaults)']['max_lease_duration'] == -1
    assert rows[project]['max_lease_duration'] == 7200

    # one field back to its default, the others kept
    done = cli('quota-set', project, '--max-lease-duration', 'default',
               '-f', 'json')
    assert done.code == 0, done
    quota = json.loads(done.out)
    assert quota['max_lease_duration'] == -1
    assert quota['budget_period'] == 'week'

    done = cli('quota-set', project)
    assert done.code == 1 and 'Nothing to change.' in done.err, done
    done = cli('quota-set', project, '--budget', 'VCPU=lots')
    assert done.code == 1
    assert '--budget VCPU=lots: not a number' in done.err, done
    done = cli('quota-set', project, '--max-concurrent', 'VCPU=-7')
    assert done.code == 1
    assert 'max_concurrent.VCPU must be -1 (no limit)' in done.err, done

    assert cli('quota-delete', project).code == 0
    done = cli('quota-show', project, '-f', 'json')
    assert done.code == 0, done
    assert json.loads(done.out)['own']['budget'] is None
