"""Billing commands (``/v1/billing``, microversion 1.10): ``billing``
(the bill of a period; ``-f csv`` for a spreadsheet), ``billing-rates-show``
and ``billing-rates-set``."""

import json
import sys

from cliff import lister
from cliff import show

from climate.cli import common
from climate.cli import parsing

LINE_COLUMNS = ('project_id', 'lease_name', 'lease_id', 'kind',
                'resource_type', 'resource_class', 'unit', 'quantity',
                'rate', 'factor', 'charge')
RATE_FIELDS = ('currency', 'lease_fee', 'hourly', 'advance_premium')


class ShowBill(lister.Lister):
    """Show the bill of a period, priced by the rate table.

    What each lease consumed before now, by class, priced by the rate
    table, and a fee per lease started in the period.  The total goes to
    standard error.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        who = parser.add_mutually_exclusive_group()
        who.add_argument('--project', metavar='<project-id>',
                         help="Another project's bill (administrators; "
                              'default: your own project)')
        who.add_argument('--all-projects', action='store_true',
                         help="Every project's bill (administrators)")
        common.add_period(parser, 'Start of the period (default: the '
                          'first day of this month)', 'End of the period '
                          '(default: the first day of next month)')
        return parser

    def take_action(self, args):
        bill = common.client_of(self).billing.get(
            project_id=args.project, start=args.start, end=args.end,
            all_projects=args.all_projects)
        sys.stderr.write('%s from %s to %s: %s %s\n' % (
            bill['project_id'] or 'Every project', bill['start'],
            bill['end'], bill['total'], bill['currency']))
        return common.list_items(bill['lines'], LINE_COLUMNS)


class ShowRates(show.ShowOne):
    """Show the rate table."""

    def take_action(self, args):
        return common.show_item(common.client_of(self).billing.rates(),
                                RATE_FIELDS)


class SetRates(show.ShowOne):
    """Replace the rate table (administrators).

    The new table is a JSON object, read from a file or given inline.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument('--file', metavar='<path>',
                            help='A JSON file holding the rate table')
        source.add_argument('--json', metavar='<json>',
                            help='The rate table as JSON text')
        return parser

    def take_action(self, args):
        try:
            if args.file:
                with open(args.file, encoding='utf-8') as handle:
                    rates = json.load(handle)
            else:
                rates = json.loads(args.json)
        except OSError as exc:
            raise parsing.BadArgument('--file %s: %s' % (args.file,
                                                         exc.strerror))
        except ValueError as exc:
            raise parsing.BadArgument('The rate table is not JSON: %s' % exc)
        return common.show_item(
            common.client_of(self).billing.set_rates(rates), RATE_FIELDS)
