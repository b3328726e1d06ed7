"""Horizon's test cases with the reservation service in the user's
catalog (Climate's panels need it: ``openstack.services.reservation``).

The views and forms are tested through Django's test client with the API
wrapper (``climate.dashboard.api.climate``) mocked: that is the boundary;
the wrapper itself is tested against the real API (test_api.py).
"""

from unittest import mock

from openstack_dashboard.test import helpers

from climate.dashboard.api import climate as climate_api
from climate.tests.unit.dashboard import identity

API_URL = 'http://reservation.example.com:1234/v1'

#: a Heat template whose group of servers the stack plugin reserves
#: (its flavor is the served API's static one: test_form_bodies_api.py)
STACK_TEMPLATE = """heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 1}
resources:
  web:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.tiny, image: cirros}
"""


class WithReservation:
    #: False: the user's catalog has no reservation service
    reservation_in_catalog = True

    def _setup_user(self, **kwargs):
        if self.reservation_in_catalog:
            self.service_catalog = list(self.service_catalog) + \
                identity.catalog(API_URL)
        super()._setup_user(**kwargs)

    def mock_api(self, name, **kwargs):
        """``climate_api.<name>`` mocked for this test."""
        patcher = mock.patch.object(climate_api, name, **kwargs)
        self.addCleanup(patcher.stop)
        return patcher.start()

    def messages_of(self, response):
        return [str(m) for m in response.context['messages']] \
            if response.context else []


class TestCase(WithReservation, helpers.TestCase):
    """A project member."""


class AdminTestCase(WithReservation, helpers.BaseAdminViewTests):
    """An administrator."""


def lease(lease_id='lease-1', **fields):
    values = {'id': lease_id, 'name': 'lab', 'status': 'PENDING',
              'lease_type': None, 'start_date': '2090-01-01T12:00:00.000000',
              'end_date': '2090-01-01T18:00:00.000000',
              'project_id': 'project-a', 'status_reason': None,
              'reservations': [{'id': 'res-1',
                                'resource_type': 'physical:host',
                                'status': 'pending', 'min': 1, 'max': 2,
                                'hypervisor_properties': '',
                                'resource_properties': ''}],
              'events': [{'id': 'ev-2', 'event_type': 'end_lease',
                          'time': '2090-01-01T18:00:00.000000',
                          'status': 'UNDONE'},
                         {'id': 'ev-1', 'event_type': 'start_lease',
                          'time': '2090-01-01T12:00:00.000000',
                          'status': 'UNDONE'}]}
    values.update(fields)
    return climate_api.Lease(values)
