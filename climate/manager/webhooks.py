"""Webhooks: a project's endpoints for its leases' notices.

A project registers webhooks (``/v1/webhooks``, microversion 1.7): a URL,
a secret and, optionally, the event types it wants.  When the event
engine runs a notice of a lease (a user event of type ``notification``,
as Heat's ``OS::Blazar::Lease`` sends them, or the lease's before-end
notice) it calls :func:`enqueue` in the transaction that marks the event
DONE: one delivery row per matching webhook of the lease's project, so a
notice is recorded exactly once (the unique key ``(webhook_id,
event_id)``), and a lease never waits for an endpoint.

Each manager runs a delivery worker
(:class:`climate.manager.workers.delivery.DeliveryWorker`): it claims due
deliveries in SQL (owner, token and expiry, SKIP LOCKED where the
database has it),
POSTs each body signed with the webhook's secret
(``X-Climate-Signature: sha256=<hex HMAC-SHA256 of the body>``), and
records the outcome while its claim is still on the row: a 2xx answer is
delivered; anything else is retried after an exponential backoff until
``[webhooks] max_attempts``, then failed.  A manager that dies while
sending leaves its claim to expire, and another one sends the delivery
again: at least once (the endpoint tells copies apart by
``X-Climate-Delivery``).

URLs are checked when a webhook is created, and again before every
attempt (a name may resolve elsewhere since): http or https, a host that
resolves, and none of its addresses loopback, link-local, unspecified or
multicast unless ``[webhooks] allow_private_targets`` (the managers would
otherwise POST to themselves or to the cloud's metadata service).
"""

import hashlib
import hmac
import ipaddress
import json
import socket
import urllib.parse
import uuid

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from climate import dates
from climate.db import webhooks as db_webhooks
from climate import exceptions
from climate.lease import events as lease_events

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

#: The event types delivered to webhooks (a webhook's ``event_types``
#: filter takes these).
DELIVERED_TYPES = (lease_events.NOTIFICATION, lease_events.BEFORE_END)
#: Version of a delivery's body (MAJOR.MINOR; a MINOR bump only adds
#: fields).
BODY_VERSION = '1.0'
SIGNATURE_HEADER = 'X-Climate-Signature'
MAX_URL_LENGTH = 2048
MIN_SECRET_LENGTH = 16
MAX_SECRET_LENGTH = 255
CREATE_FIELDS = ('url', 'secret', 'event_types')


# -- pure pieces --------------------------------------------------------------

def sign(secret, body):
    """``sha256=<hex HMAC-SHA256 of body>``, the signature header's value.

    :param secret: the webhook's secret (text).
    :param body: the bytes sent.
    """
    digest = hmac.new(secret.encode('utf-8'), body, hashlib.sha256)
    return 'sha256=' + digest.hexdigest()


def verify(secret, body, signature):
    """True if ``signature`` (the header's value) signs ``body``: what an
    endpoint does (constant-time comparison)."""
    return hmac.compare_digest(sign(secret, body), signature or '')


def retry_delay(attempts, base, ceiling):
    """Seconds to wait after the ``attempts``-th failed attempt: ``base``
    doubled per attempt after the first, at most ``ceiling``."""
    return min(ceiling, base * (2 ** max(0, attempts - 1)))


def _forbidden(address):
    """Why ``address`` (an ipaddress object) is no target, or None."""
    mapped = getattr(address, 'ipv4_mapped', None)
    if mapped is not None:
        address = mapped
    for attribute, what in (('is_loopback', 'a loopback'),
                            ('is_link_local', 'a link-local'),
                            ('is_unspecified', 'an unspecified'),
                            ('is_multicast', 'a multicast')):
        if getattr(address, attribute):
            return what
    return None


def _resolve(host, port):
    """The host's addresses (``socket.getaddrinfo``); tests replace it."""
    return sorted({info[4][0] for info in socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM)})


def check_url(url, allow_private, resolve=None):
    """The URL if a webhook may POST to it.

    http or https, a host, no credentials in it; the host resolves and
    none of its addresses is loopback, link-local, unspecified or
    multicast (unless ``allow_private``).

    :raises InvalidInput: naming the field ``url`` and what is wrong.
    """
    resolve = resolve or _resolve

    def refuse(why):
        raise exceptions.InvalidInput(reason='url %s' % why)

    if not isinstance(url, str) or not url.strip():
        refuse('must be a non-empty string')
    if len(url) > MAX_URL_LENGTH:
        refuse('is longer than %d characters' % MAX_URL_LENGTH)
    if any(ord(c) <= 32 or ord(c) == 127 for c in url):
        refuse('must not contain spaces or control characters')
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        refuse('is not a valid URL (%s)' % exc)
    if parts.scheme not in ('http', 'https'):
        refuse('must be an http:// or https:// URL, not %r' % url)
    if not parts.hostname:
        refuse('%r names no host' % url)
    if parts.username is not None or parts.password is not None:
        refuse('must not carry credentials: sign with the secret instead')
    port = port or (443 if parts.scheme == 'https' else 80)
    try:
        # an address given as such needs no look-up
        addresses = [str(ipaddress.ip_address(parts.hostname))]
    except ValueError:
        addresses = None
    try:
        addresses = addresses or resolve(parts.hostname, port)
    except (OSError, UnicodeError) as exc:
        refuse('host %s does not resolve (%s): the managers could not '
               'reach it' % (parts.hostname, exc))
    if not addresses:
        refuse('host %s does not resolve' % parts.hostname)
    if not allow_private:
        for text in addresses:
            why = _forbidden(ipaddress.ip_address(text.split('%')[0]))
            if why:
                refuse('host %s is %s address (%s): not a webhook '
                       'target unless the operator sets [webhooks] '
                       'allow_private_targets' % (parts.hostname, why,
                                                  text))
    return url


def check_create(body, allow_private, resolve=None):
    """Validated values of a webhook create; no I/O but the URL's DNS
    look-up, which comes last (nothing is written before these pass).

    :returns: dict with url, secret and event_types (None: every type).
    """
    unknown = sorted(set(body) - set(CREATE_FIELDS))
    if unknown:
        raise exceptions.InvalidInput(
            reason='%s cannot be set; a webhook takes %s' % (
                unknown[0], ', '.join(CREATE_FIELDS)))
    missing = [f for f in ('url', 'secret') if body.get(f) is None]
    if missing:
        raise exceptions.MissingParameter(param=', '.join(missing))
    secret = body['secret']
    if not isinstance(secret, str) or not \
            MIN_SECRET_LENGTH <= len(secret) <= MAX_SECRET_LENGTH:
        raise exceptions.InvalidInput(
            reason='secret must be a string of %d to %d characters' % (
                MIN_SECRET_LENGTH, MAX_SECRET_LENGTH))
    event_types = body.get('event_types')
    if event_types is not None:
        if not isinstance(event_types, list) or not event_types:
            raise exceptions.InvalidInput(
                reason='event_types must be a non-empty list (or null for '
                       'all of %s)' % ', '.join(DELIVERED_TYPES))
        for index, name in enumerate(event_types):
            if name not in DELIVERED_TYPES:
                raise exceptions.InvalidInput(
                    reason='event_types[%d] must be one of %s, not %r' % (
                        index, ', '.join(DELIVERED_TYPES), name))
        event_types = sorted(set(event_types))
    url = check_url(body['url'], allow_private, resolve)
    return {'url': url, 'secret': secret, 'event_types': event_types}


def webhook_view(row):
    """A webhook as the API shows it: never its secret."""
    return {'id': row['id'], 'project_id': row['project_id'],
            'url': row['url'], 'event_types': row['event_types'],
            'created_at': dates.format_timestamp(row['created_at'])}


def delivery_view(row):
    """One entry of a webhook's delivery log."""
    view = dict(row)
    for key in ('next_attempt_at', 'created_at', 'delivered_at'):
        view[key] = dates.format_timestamp(row[key])
    if view['status'] != db_webhooks.PENDING:
        view['next_attempt_at'] = None  # nothing more will be tried
    return view


# -- the event's side: recording deliveries -----------------------------------

def enqueue(ctx, project_id, lease_view, event_view, now):
    """Write one delivery per webhook of ``project_id`` wanting the
    event's type, in the caller's transaction (the one marking the event
    DONE); returns how many."""
    rows = []
    for hook in db_webhooks.webhooks_of_project(ctx, project_id):
        if hook['event_types'] and \
                event_view['event_type'] not in hook['event_types']:
            continue
        delivery_id = str(uuid.uuid4())
        body = {'version': BODY_VERSION, 'delivery_id': delivery_id,
                'webhook_id': hook['id'], 'project_id': project_id,
                'event_type': event_view['event_type'],
                'event': event_view, 'lease': lease_view}
        rows.append({'id': delivery_id, 'webhook_id': hook['id'],
                     'project_id': project_id,
                     'lease_id': lease_view['id'],
                     'event_id': event_view['id'],
                     'event_type': event_view['event_type'],
                     'body': json.dumps(body, sort_keys=True),
                     'status': db_webhooks.PENDING, 'attempts': 0,
                     'next_attempt_at': now, 'created_at': now})
    db_webhooks.deliveries_insert(ctx, rows)
    return len(rows)


# -- the API's side -----------------------------------------------------------

def _scope(ctx):
    """The project a caller is confined to; None for admins."""
    return None if ctx.is_admin else ctx.project_id


class WebhookService:
    """Create, list, show and delete a project's webhooks; read their
    delivery logs.  Admins see every project's."""

    def __init__(self, resolve=None):
        self._resolve = resolve

    def create(self, ctx, body):
        """Register a webhook for the caller's project; 400 and nothing
        written on bad input."""
        values = check_create(body, CONF.webhooks.allow_private_targets,
                              self._resolve)
        values['project_id'] = ctx.project_id
        return webhook_view(db_webhooks.webhook_insert(ctx, values))

    def list(self, ctx, project_id=None):
        """The caller's project's webhooks (admins: all, or
        ``project_id``'s)."""
        scope = _scope(ctx)
        if scope is None:
            scope = project_id
        return [webhook_view(row)
                for row in db_webhooks.webhook_list(ctx, scope)]

    def _get(self, ctx, webhook_id):
        row = db_webhooks.webhook_get(ctx, webhook_id, _scope(ctx))
        if row is None:
            raise exceptions.NotFound(kind='Webhook', id=webhook_id)
        return row

    def get(self, ctx, webhook_id):
        """One webhook; 404 outside the caller's scope."""
        return webhook_view(self._get(ctx, webhook_id))

    def delete(self, ctx, webhook_id):
        """Remove a webhook and its delivery log (pending deliveries are
        not sent)."""
        if not db_webhooks.webhook_delete(ctx, webhook_id, _scope(ctx)):
            raise exceptions.NotFound(kind='Webhook', id=webhook_id)

    def deliveries(self, ctx, webhook_id, limit):
        """A webhook's delivery log, newest first."""
        self._get(ctx, webhook_id)
        return [delivery_view(row) for row in
                db_webhooks.deliveries_list(ctx, webhook_id, limit)]


_user_errors = messaging.expected_exceptions(exceptions.ClimateException)


class WebhooksEndpoint:
    """What the API may call about webhooks (authorization is the API's
    job; scoping to the caller's project is the service's)."""

    target = messaging.Target(version='1.0')

    def __init__(self, service=None):
        self.service = service or WebhookService()

    @_user_errors
    def webhook_list(self, ctx, project_id=None):
        return self.service.list(ctx, project_id)

    @_user_errors
    def webhook_get(self, ctx, webhook_id):
        return self.service.get(ctx, webhook_id)

    @_user_errors
    def webhook_create(self, ctx, body):
        return self.service.create(ctx, body)

    @_user_errors
    def webhook_delete(self, ctx, webhook_id):
        self.service.delete(ctx, webhook_id)

    @_user_errors
    def webhook_deliveries(self, ctx, webhook_id, limit):
        return self.service.deliveries(ctx, webhook_id, limit)
