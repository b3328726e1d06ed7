"""Webhook commands (``/v1/webhooks``, microversion 1.7): webhook-list,
-show, -create, -delete and webhook-deliveries (the delivery log).

The secret is write-only: given at create, never shown again."""

from cliff import command
from cliff import lister
from cliff import show

from climate.cli import common

LIST_COLUMNS = ('id', 'url', 'event_types')
SHOW_FIELDS = ('id', 'project_id', 'url', 'event_types', 'created_at')
DELIVERY_COLUMNS = ('id', 'event_type', 'lease_id', 'status', 'attempts',
                    'last_status_code', 'next_attempt_at', 'delivered_at')
DELIVERY_FIELDS = DELIVERY_COLUMNS + ('event_id', 'webhook_id',
                                      'last_error', 'created_at')
EVENT_TYPES = ('notification', 'before_end_lease')


class CreateWebhook(show.ShowOne):
    """Register a webhook for the notices of your project's leases."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('url', metavar='<url>',
                            help='http(s) URL the notices are POSTed to')
        parser.add_argument('--secret', metavar='<secret>', required=True,
                            help='Key of the X-Climate-Signature HMAC '
                                 '(16 to 255 characters; never shown '
                                 'again)')
        parser.add_argument('--event-type', metavar='<type>',
                            dest='event_types', action='append',
                            choices=EVENT_TYPES,
                            help='Deliver only this event type '
                                 '(repeatable; default: all)')
        return parser

    def take_action(self, args):
        body = {'url': args.url, 'secret': args.secret}
        if args.event_types:
            body['event_types'] = args.event_types
        hook = common.client_of(self).webhooks.create(body)
        return common.show_item(hook, SHOW_FIELDS)


class ListWebhooks(lister.Lister):
    """List your project's webhooks (admins: every project's)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project-id>',
                            help="Only this project's (admins)")
        parser.add_argument('--long', action='store_true',
                            help='Every field of each webhook')
        return parser

    def take_action(self, args):
        hooks = common.client_of(self).webhooks.list(args.project)
        cols = SHOW_FIELDS if args.long else LIST_COLUMNS
        return common.list_items(hooks, cols)


class ShowWebhook(show.ShowOne):
    """Show a webhook (not its secret)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('webhook', metavar='<webhook-id>',
                            help='Id of the webhook')
        return parser

    def take_action(self, args):
        return common.show_item(
            common.client_of(self).webhooks.find(args.webhook), SHOW_FIELDS)


class DeleteWebhook(command.Command):
    """Remove webhooks (and their delivery logs)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('webhooks', metavar='<webhook-id>', nargs='+',
                            help='Id of a webhook')
        return parser

    def take_action(self, args):
        common.delete_each(self, 'webhook', args.webhooks,
                           common.client_of(self).webhooks,
                           lambda hook: hook.get('url'))


class ListWebhookDeliveries(lister.Lister):
    """A webhook's delivery log, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('webhook', metavar='<webhook-id>',
                            help='Id of the webhook')
        parser.add_argument('--limit', metavar='<n>', type=int,
                            help='At most this many deliveries')
        parser.add_argument('--long', action='store_true',
                            help='Every field of each delivery')
        return parser

    def take_action(self, args):
        deliveries = common.client_of(self).webhooks.deliveries(
            args.webhook, args.limit)
        cols = DELIVERY_FIELDS if args.long else DELIVERY_COLUMNS
        return common.list_items(deliveries, cols)
