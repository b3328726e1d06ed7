"""``climate usage`` and ``climate usage-capacity`` (microversion 1.8)
against a running climate-all (static inventory).

The server is shared by the whole session: the test tags its pool, and
reserves in 2095, where no other test does.
"""

import json
import uuid

START, MIDDLE, END = '2095-03-01T00:00:00', '2095-03-01T01:00:00', \
    '2095-03-01T03:00:00'


def test_usage_of_a_project_and_the_planning_view(cli):
    tag = uuid.uuid4().hex[:8]
    project = 'project-%s' % tag
    pool = 'usage-%s' % tag
    assert cli('volume-pool-create', pool, '--total-capacity-gb', 100,
               '--capability', 'suite=%s' % tag).code == 0
    done = cli('lease-create', 'usage-a-%s' % tag, '--reservation',
               'resource_type=virtual:volume,size_gb=10,count=1,'
               'resource_properties=["=", "$suite", "%s"]' % tag,
               '--start-date', START, '--end-date', END, project=project)
    assert done.code == 0, done

    done = cli('usage', '--start', START, '--end', END, '-f', 'json',
               project=project)
    assert done.code == 0, done
    assert done.err == 'Project %s from %s to %s\n' % (
        project, '2095-03-01T00:00:00.000000', '2095-03-01T03:00:00.000000')
    rows = {r['resource_class']: r for r in json.loads(done.out)}
    assert rows['VOLUME_GB'] == {
        'resource_type': 'virtual:volume', 'resource_class': 'VOLUME_GB',
        'unit': 'GB-hours', 'past': 0.0, 'current': None, 'future': 30.0,
        'total': 30.0}
    assert rows['VOLUME']['total'] == 3.0

    done = cli('usage', '--start', MIDDLE, '--end', END, '--by-lease', '-f',
               'json', project=project)
    assert done.code == 0, done
    gb = [r for r in json.loads(done.out)
          if r['resource_class'] == 'VOLUME_GB']
    assert [(r['lease'], r['status'], r['future']) for r in gb] == [
        ('usage-a-%s' % tag, 'PENDING', 20.0)]

    # another project's usage: administrators only
    done = cli('usage', '--project', 'someone-else', project=project)
    assert done.code == 1
    assert '(HTTP 403)' in done.err, done
    done = cli('usage', '--project', project, '--start', START, '--end',
               END, '-f', 'json')
    assert done.code == 0, done
    assert {r['resource_class']: r['total']
            for r in json.loads(done.out)}['VOLUME_GB'] == 30.0

    done = cli('usage-capacity', '--start', START, '--end', END, '--step',
               '1h', '--resource-class', 'VOLUME_GB', '-f', 'json')
    assert done.code == 0, done
    steps = json.loads(done.out)
    assert [(s['start'], s['reserved_peak'], s['reserved_hours'])
            for s in steps] == [
        ('2095-03-01T00:00:00.000000', 10, 10.0),
        ('2095-03-01T01:00:00.000000', 10, 10.0),
        ('2095-03-01T02:00:00.000000', 10, 10.0)]
    assert all(s['reservable'] >= 100 and s['unit'] == 'GB-hours'
               for s in steps)

    done = cli('usage-capacity', project=project)
    assert done.code == 1
    assert '(HTTP 403)' in done.err, done
    done = cli('usage-capacity', '--step', 'often')
    assert done.code == 1
    assert 'step must be a whole number' in done.err, done

    assert cli('lease-delete', 'usage-a-%s' % tag, project=project).code == 0
    assert cli('volume-pool-delete', pool).code == 0
