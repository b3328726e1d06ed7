"""The manager's RPC endpoint for ``/v1/billing`` (microversion 1.10):
the operator's rate table, and the bill of a period -- what each lease
consumed, priced by it (``climate.scheduling.billing``; the SQL is
``climate.db.billing``).

Authorization is the API's job; the query's parameters and the rate
table are checked here (400 naming the field).
"""

from oslo_log import log as logging
import oslo_messaging as messaging

from climate import dates
from climate.db import api as db_api
from climate.db import billing as db_billing
from climate import exceptions
from climate.manager import usage as usage_endpoint
from climate.scheduling import billing

LOG = logging.getLogger(__name__)

_user_errors = messaging.expected_exceptions(exceptions.ClimateException)

EXPORT_PARAMS = ('start', 'end')


class BillingEndpoint:
    """What the API may call about billing."""

    target = messaging.Target(version='1.0')

    @_user_errors
    def billing_rates_get(self, ctx):
        """The rate table in force (an empty one until it is set)."""
        with db_api.reader(ctx) as session:
            return db_billing.get_rates(session) or dict(billing.EMPTY)

    @_user_errors
    def billing_rates_set(self, ctx, body):
        """Replace the rate table; 400 naming the first bad field, and
        nothing written."""
        try:
            rates = billing.check(body)
        except billing.BadRates as exc:
            raise exceptions.InvalidInput(reason=str(exc))
        with db_api.writer(ctx) as session:
            db_billing.put_rates(session, rates)
        LOG.info('Billing rates set: %s', rates)
        return rates

    @_user_errors
    def billing_export(self, ctx, query, project_id=None):
        """The bill of a period (``start``, ``end``; the current month
        by default) for ``project_id``, or every project when None (the
        API decides who may ask for which): resource-hours consumed before
        now, by lease and class, priced, with the leases' fees."""
        usage_endpoint.refuse_unknown(query, EXPORT_PARAMS)
        now = dates.utcnow()
        start, end = usage_endpoint.period(query, now,
                                           usage_endpoint.month_of(now))
        with db_api.reader(ctx) as session:
            rates = db_billing.get_rates(session) or dict(billing.EMPTY)
            rows = []
            if start < now:
                rows = db_billing.consumed(session, start, min(end, now),
                                           project_id)
        merged = {}
        for row in rows:
            key = tuple(row[:7])
            merged[key] = merged.get(key, 0) + int(row[7] or 0)
        answer = billing.bill(
            [billing.Consumed(*key, seconds) for key, seconds in
             merged.items()], rates, start, end, now)
        answer.update(start=dates.format(start), end=dates.format(end),
                      now=dates.format(now), project_id=project_id)
        return answer
