from climate.policies import base

PREFIX = 'climate:billing:%s'
BILLING = '/v1/billing'

rules = [
    base.rule(PREFIX % 'get', "A project's bill of a period: what its "
              'leases consumed, priced (microversion 1.10).', BILLING, 'GET',
              base.PROJECT_READER),
    base.rule(PREFIX % 'get:all_projects', "Another project's bill, or "
              "every project's.", BILLING, 'GET'),
    base.rule(PREFIX % 'rates:get', 'Show the rate table.',
              BILLING + '/rates', 'GET', base.PROJECT_READER),
    base.rule(PREFIX % 'rates:put', 'Replace the rate table.',
              BILLING + '/rates', 'PUT'),
]


def list_rules():
    return rules
