"""Webhook delivery: a manager's thread POSTing the deliveries its
events recorded (``climate.manager.webhooks`` says what a delivery is,
and how it is signed and checked)."""

import concurrent.futures
import datetime
import threading
import time
import urllib.error
import urllib.request
import uuid

from oslo_config import cfg
from oslo_log import log as logging

from climate import context as climate_context
from climate import dates
from climate.db import webhooks as db_webhooks
from climate import exceptions
from climate.manager import webhooks
from climate.manager.workers import base as worker_base
from climate import outbound

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
#: Bytes of an endpoint's answer kept in the log (it is not ours to keep).
ANSWER_KEPT = 200


def post(url, body, headers, timeout):
    """POST ``body``; returns ``(status code or None, error text or
    None)``, never raises for the endpoint's failures."""
    request = urllib.request.Request(url, data=body, headers=headers,
                                     method='POST')
    try:
        with outbound.OPENER.open(request, timeout=timeout) as answer:
            return answer.status, None
    except urllib.error.HTTPError as exc:
        try:
            text = exc.read(ANSWER_KEPT).decode('utf-8', 'replace')
        except Exception:  # the answer's body is a courtesy
            text = ''
        finally:
            exc.close()
        return exc.code, ('HTTP %d %s%s' % (
            exc.code, exc.reason, ': ' + text if text else ''))[:1000]
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, 'reason', exc)
        return None, ('%s: %s' % (type(reason).__name__, reason))[:1000]


class DeliveryWorker(worker_base.Worker):
    """A manager's thread sending due deliveries, ``[webhooks] workers``
    at a time; safe with any number of managers doing the same.  Woken
    when an event recorded some."""

    name = 'climate-webhooks'
    failure = 'Webhook delivery pass failed; retrying'

    def __init__(self, owner, resolve=None, sender=None):
        super().__init__()
        self.owner = owner
        self._resolve = resolve
        self._send = sender or post
        self._ctx = climate_context.admin_context()
        self._workers = CONF.webhooks.workers
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self._workers, thread_name_prefix='climate-webhook')
        self._slots = threading.Semaphore(self._workers)
        # ids claimed and not yet attempted: what stop() gives back
        self._held = set()
        self._held_lock = threading.Lock()

    def stop(self, timeout=30):
        """Stop claiming, let the POSTs under way end (each is bounded by
        ``[webhooks] timeout``), give back the claims not started."""
        super().stop(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._held_lock:
            held = sorted(self._held)
        if not held:
            return  # no database call: a manager stopping in an outage
        try:
            db_webhooks.deliveries_release(
                climate_context.admin_context(), self.owner, held,
                dates.utcnow())
        except Exception:
            LOG.exception('Could not give back the claimed deliveries; '
                          'they are sent again when their claims expire')

    def work(self):
        # a claim made: more may be due already
        return bool(self.run_once(self._ctx))

    def due_in(self):
        return self.seconds_until(
            lambda: db_webhooks.next_due(self._ctx),
            CONF.webhooks.poll_interval, what='the next delivery time')

    def claim_ttl(self):
        """How long a claim lasts: never shorter than an attempt."""
        return datetime.timedelta(seconds=max(
            CONF.webhooks.claim_ttl, CONF.webhooks.timeout + 5))

    def run_once(self, ctx):
        """Claim what is due (as many as there are free senders) and hand
        it to them; returns the count."""
        free = 0
        while free < self._workers and self._slots.acquire(blocking=False):
            free += 1
        if not free:
            # every sender busy: wait for one, at most a poll interval
            if not self._slots.acquire(
                    timeout=CONF.webhooks.poll_interval):
                return 0
            free = 1
        token = str(uuid.uuid4())
        try:
            claimed = db_webhooks.deliveries_claim(
                ctx, self.owner, token, dates.utcnow(), free,
                self.claim_ttl())
        except Exception:
            for _ in range(free):
                self._slots.release()
            raise
        for _ in range(free - len(claimed)):
            self._slots.release()
        with self._held_lock:
            self._held.update(d['id'] for d in claimed)
        for delivery in claimed:
            future = self._pool.submit(self.deliver, ctx, delivery, token)
            future.add_done_callback(lambda _f: self._slots.release())
        return len(claimed)

    def deliver(self, ctx, delivery, token):
        """One attempt at a claimed delivery, and its outcome recorded;
        never raises."""
        with self._held_lock:
            self._held.discard(delivery['id'])
        try:
            code, error = self._attempt(delivery)
            self._record(ctx, delivery, token, code, error)
        except Exception:
            LOG.exception('Delivery %s: the attempt could not be recorded; '
                          'it is made again when its claim expires',
                          delivery['id'])

    def _attempt(self, delivery):
        try:
            webhooks.check_url(delivery['url'],
                               CONF.webhooks.allow_private_targets,
                               self._resolve)
        except exceptions.InvalidInput as exc:
            # the name resolves elsewhere since the webhook was made
            return None, exc.message
        body = delivery['body'].encode('utf-8')
        headers = {
            'Content-Type': 'application/json',
            'User-Agent': 'climate-webhooks/1.0',
            webhooks.SIGNATURE_HEADER: webhooks.sign(delivery['secret'], body),
            'X-Climate-Delivery': delivery['id'],
            'X-Climate-Event': delivery['event_type'],
            'X-Climate-Attempt': str(delivery['attempts']),
            'X-Climate-Timestamp': str(int(time.time())),
        }
        return self._send(delivery['url'], body, headers,
                          CONF.webhooks.timeout)

    def _record(self, ctx, delivery, token, code, error):
        now = dates.utcnow()
        attempts = delivery['attempts']
        if code is not None and 200 <= code < 300:
            values = {'status': db_webhooks.DELIVERED, 'delivered_at': now,
                      'last_status_code': code, 'last_error': None}
        elif attempts >= CONF.webhooks.max_attempts:
            values = {'status': db_webhooks.FAILED, 'last_status_code': code,
                      'last_error': error}
            LOG.warning('Delivery %s to webhook %s gave up after %d '
                        'attempts: %s', delivery['id'],
                        delivery['webhook_id'], attempts, error)
        else:
            delay = webhooks.retry_delay(attempts, CONF.webhooks.backoff_base,
                                CONF.webhooks.backoff_max)
            values = {'next_attempt_at': dates.ceil_second(
                now + datetime.timedelta(seconds=delay)),
                'last_status_code': code, 'last_error': error}
        if not db_webhooks.delivery_finish(ctx, delivery['id'], token,
                                           values):
            LOG.info('Delivery %s was taken over (its claim expired) or its '
                     'webhook deleted; its outcome is not recorded here',
                     delivery['id'])
