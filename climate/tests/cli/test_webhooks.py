"""Webhooks from the command line (microversion 1.7), against a running
climate-all: ``climate webhook-create/-list/-show/-delete`` and
``webhook-deliveries``.  climate-all runs with the default ``[webhooks]
allow_private_targets = false``: a loopback URL is refused, and the
webhooks made here point to a documentation range (RFC 5737), which no
notice is ever sent to (their leases have none)."""

import json
import uuid


def _ok(done):
    assert done.code == 0, done
    return done


def test_webhook_commands(cli):
    project = 'hooks-%s' % uuid.uuid4().hex[:8]
    made = json.loads(_ok(cli(
        'webhook-create', 'https://192.0.2.20/notices', '--secret',
        'sixteen-characters-or-more', '--event-type', 'notification',
        '-f', 'json', project=project)).out)
    assert made['url'] == 'https://192.0.2.20/notices'
    assert made['event_types'] == ['notification']
    assert made['project_id'] == project
    assert 'secret' not in made

    listed = json.loads(_ok(cli('webhook-list', '-f', 'json',
                                project=project)).out)
    assert [(h['id'], h['url']) for h in listed] == [
        (made['id'], made['url'])]
    assert set(listed[0]) == {'id', 'url', 'event_types'}
    long = json.loads(_ok(cli('webhook-list', '--long', '-f', 'json',
                              project=project)).out)
    assert set(long[0]) == {'id', 'project_id', 'url', 'event_types',
                            'created_at'}
    # another project sees none of it
    assert json.loads(_ok(cli('webhook-list', '-f', 'json',
                              project=project + '-other')).out) == []
    shown = json.loads(_ok(cli('webhook-show', made['id'], '-f', 'json',
                               project=project)).out)
    assert shown == made
    assert json.loads(_ok(cli('webhook-deliveries', made['id'], '-f',
                              'json', project=project)).out) == []

    done = _ok(cli('webhook-delete', made['id'], project=project))
    assert 'Deleted webhook https://192.0.2.20/notices (%s)' % made['id'] \
        in done.out
    gone = cli('webhook-show', made['id'], project=project)
    assert gone.code == 1 and 'No webhook with an id of' in gone.err


def test_webhook_create_refusals(cli):
    project = 'hooks-%s' % uuid.uuid4().hex[:8]
    loopback = cli('webhook-create', 'http://127.0.0.1:9/x', '--secret',
                   'sixteen-characters-or-more', project=project)
    assert loopback.code == 1
    assert 'url host 127.0.0.1 is a loopback address' in loopback.err
    assert '(HTTP 400)' in loopback.err
    short = cli('webhook-create', 'https://192.0.2.20/', '--secret', 'x',
                project=project)
    assert short.code == 1 and 'secret must be a string' in short.err
    # argparse refuses an unknown type before any request
    wrong = cli('webhook-create', 'https://192.0.2.20/', '--secret',
                'sixteen-characters-or-more', '--event-type', 'end_lease',
                project=project)
    assert wrong.code == 2
    # nothing was written
    assert json.loads(_ok(cli('webhook-list', '-f', 'json',
                              project=project)).out) == []
