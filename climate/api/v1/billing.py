"""/v1/billing (microversion 1.10): the bill of a period, and the
operator's rate table.

* ``GET /v1/billing`` (``start``, ``end``, ``project_id`` or
  ``all_projects=true``, ``format`` ``json`` or ``csv``): what each lease
  consumed within the period, priced; the caller's own project, or
  (administrators) another or every project;
* ``GET /v1/billing/rates`` (any reader) and ``PUT /v1/billing/rates``
  (administrators): the rate table.

See doc/source/billing.rst.
"""

import csv
import io
import json

import pecan
from pecan import rest

from climate.api import microversion
from climate.api.v1 import inventory
from climate.api.v1 import types
from climate import exceptions
from climate import policy

VERSION = microversion.Version.parse('1.10')
PREFIX = 'climate:billing:%s'
#: The columns of the CSV export, in order.
CSV_COLUMNS = ('project_id', 'lease_id', 'lease_name', 'kind',
               'resource_type', 'resource_class', 'unit', 'quantity', 'rate',
               'factor', 'charge', 'currency')


def _csv(bill):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\r\n')
    writer.writerow(CSV_COLUMNS)
    for line in bill['lines']:
        line = dict(line, currency=bill['currency'])
        writer.writerow(['' if line.get(c) is None else line[c]
                         for c in CSV_COLUMNS])
    return out.getvalue()


def _format(params):
    wanted = params.pop('format', None)
    if wanted is None:
        accept = pecan.request.headers.get('Accept', '')
        return 'csv' if 'text/csv' in accept else 'json'
    if wanted not in ('json', 'csv'):
        raise exceptions.InvalidInput(
            reason="format must be json or csv, not %r" % wanted)
    return wanted


class RatesController(rest.RestController):
    """``/v1/billing/rates``."""

    @pecan.expose('json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'rates:get', VERSION)
        inventory.query(())
        return {'rates': inventory.rpc().billing_rates_get(ctx)}

    @pecan.expose('json')
    def put(self):
        ctx = inventory.authorize(PREFIX, 'rates:put', VERSION)
        return {'rates': inventory.rpc().billing_rates_set(
            ctx, types.request_object())}


class BillingController(rest.RestController):
    """``/v1/billing``."""

    rates = RatesController()

    @pecan.expose(content_type='text/csv')
    @pecan.expose(content_type='application/json')
    def get_all(self):
        ctx = inventory.authorize(PREFIX, 'get', VERSION)
        params = inventory.query(('project_id', 'all_projects', 'start',
                                  'end', 'format'))
        output = _format(params)
        project_id = params.pop('project_id', ctx.project_id)
        every = params.pop('all_projects', 'false').lower()
        if every not in ('true', 'false'):
            raise exceptions.InvalidInput(
                reason='all_projects must be true or false, not %r' % every)
        if every == 'true':
            if 'project_id' in pecan.request.GET:
                raise exceptions.InvalidInput(
                    reason='project_id and all_projects=true cannot be '
                           'combined')
            project_id = None
        if project_id != ctx.project_id:
            policy.authorize(ctx, PREFIX % 'get:all_projects')
        bill = inventory.rpc().billing_export(ctx, params, project_id)
        if output == 'csv':
            pecan.override_template(None, 'text/csv')
            return _csv(bill)
        pecan.override_template(None, 'application/json')
        return json.dumps({'billing': bill})
