"""The ``climate`` command with real Keystone credentials.

The CLI finds Climate's endpoint in the catalog (type ``reservation``),
authenticating the ecosystem's ways: ``OS_*`` variables, and a
``clouds.yaml`` with ``--os-cloud``.  Project isolation holds through the
CLI as through the API: another project's member does not see the lease.
"""

import json
import os
import subprocess

from climate.tests.functional import procs

TIMEOUT = 120


def _run(home, env_extra, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env.update(HOME=str(home), PYTHONWARNINGS='ignore', **env_extra)
    argv = procs.console_script('climate') + [str(a) for a in args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    return done


def _os_env(cloud, who):
    user = cloud.users[who]
    return {'OS_AUTH_URL': cloud.auth_url,
            'OS_REGION_NAME': cloud.region,
            'OS_IDENTITY_API_VERSION': '3',
            'OS_USERNAME': user['username'],
            'OS_PASSWORD': user['password'],
            'OS_PROJECT_NAME': user['project_name'],
            'OS_USER_DOMAIN_NAME': user['user_domain_name'],
            'OS_PROJECT_DOMAIN_NAME': user['project_domain_name']}


def _ok(done):
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def test_cli_through_the_catalog(cloud, climate_services, tmp_path):
    demo = _os_env(cloud, 'demo')
    created = json.loads(_ok(_run(
        tmp_path, demo, 'lease-create', 'cli-ks', '--reservation',
        'resource_type=noop', '--start-date', '2090-01-01 10:00',
        '--end-date', '2090-01-01 12:00', '-f', 'json')))
    assert created['name'] == 'cli-ks'
    assert created['trust_id']  # made from the demo user's token

    # clouds.yaml + --os-cloud: the same lease
    user = cloud.users['demo']
    config = tmp_path / '.config' / 'openstack'
    config.mkdir(parents=True)
    (config / 'clouds.yaml').write_text(json.dumps({'clouds': {'it': {
        'region_name': cloud.region,
        'identity_api_version': 3,
        'auth': dict(auth_url=cloud.auth_url, **user)}}}))
    shown = json.loads(_ok(_run(tmp_path, {}, '--os-cloud', 'it',
                                'lease-show', 'cli-ks', '-f', 'json')))
    assert shown['id'] == created['id']

    # another project's member sees nothing of it
    alt = _os_env(cloud, 'alt')
    listed = json.loads(_ok(_run(tmp_path / 'alt', alt, 'lease-list',
                                 '-f', 'json')))
    assert created['id'] not in [row['id'] for row in listed]
    done = _run(tmp_path / 'alt', alt, 'lease-show', created['id'])
    assert done.returncode != 0
    assert "No lease with a name or id of '%s'" % created['id'] in \
        done.stderr
    assert 'Traceback' not in done.stderr

    _ok(_run(tmp_path, demo, 'lease-delete', 'cli-ks'))
    listed = json.loads(_ok(_run(tmp_path, demo, 'lease-list', '-f',
                                 'json')))
    assert created['id'] not in [row['id'] for row in listed]

    # bad credentials: a clear error, no traceback
    bad = dict(demo, OS_PASSWORD='wrong')
    done = _run(tmp_path, bad, 'lease-list')
    assert done.returncode != 0
    assert 'Traceback' not in done.stderr and done.stderr.strip()
