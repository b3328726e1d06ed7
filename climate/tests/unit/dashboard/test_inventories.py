"""Admin -> Reservations -> Volume Pools, Floating IPs and Network
Segments: list, add, delete, the API's refusals as its sentences, and no
panel for members; the API wrapper mocked."""

from django.urls import reverse

from climate.dashboard.api import climate as climate_api
from climate.tests.unit.dashboard import helpers

POOLS = reverse('horizon:admin:reservation_volume_pools:index')
POOL_CREATE = reverse('horizon:admin:reservation_volume_pools:create')
FIPS = reverse('horizon:admin:reservation_floatingips:index')
FIP_CREATE = reverse('horizon:admin:reservation_floatingips:create')
NETWORKS = reverse('horizon:admin:reservation_networks:index')
NETWORK_CREATE = reverse('horizon:admin:reservation_networks:create')

POOL = climate_api.VolumePool({
    'id': 'p1', 'name': 'cinder@lvm#fast', 'backend': 'lvm',
    'capacity_gb': 180, 'total_capacity_gb': 100,
    'reserved_percentage': 10, 'max_over_subscription_ratio': 2.0,
    'reservable': True, 'capabilities': {'volume_types': 'fast',
                                         'max_volumes': 50}})
FIP = climate_api.FloatingIP({
    'id': 'f1', 'floating_network_id': 'ext-net',
    'floating_ip_address': '172.24.4.200', 'subnet_id': None,
    'reservable': False})
NETWORK = climate_api.Network({
    'id': 'n1', 'network_type': 'vlan', 'physical_network': 'physnet1',
    'segment_id': 1001, 'reservable': True, 'site': 'uc'})


class VolumePoolsTests(helpers.AdminTestCase):

    def test_the_pools(self):
        self.mock_api('volume_pool_list', return_value=[POOL])
        response = self.client.get(POOLS)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'cinder@lvm#fast')
        [row] = response.context['table'].get_rows()
        self.assertEqual(row.cells['capacity_gb'].data, 180)
        self.assertEqual(str(row.cells['reservable'].data), 'Yes')
        self.assertContains(response, 'max_volumes=50, volume_types=fast')
        self.assertContains(response, 'href="%s"' % POOL_CREATE)

    def test_add_a_pool_sends_what_was_given(self):
        create = self.mock_api('volume_pool_create', return_value=POOL)
        response = self.client.post(POOL_CREATE, {
            'name': 'cinder@lvm#fast', 'total_capacity_gb': '100',
            'backend': '', 'reserved_percentage': '10',
            'max_over_subscription_ratio': '', 'reservable': 'on',
            'capabilities': 'volume_types=fast\n'})
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, POOLS)
        self.assertEqual(create.call_args.args[1], {
            'name': 'cinder@lvm#fast', 'total_capacity_gb': 100,
            'reserved_percentage': 10, 'reservable': True,
            'capabilities': {'volume_types': 'fast'}})

    def test_a_pool_not_reservable(self):
        create = self.mock_api('volume_pool_create', return_value=POOL)
        self.client.post(POOL_CREATE, {'name': 'p', 'total_capacity_gb': 5,
                                       'capabilities': ''})
        self.assertIs(create.call_args.args[1]['reservable'], False)

    def test_bad_input_is_refused_before_asking(self):
        create = self.mock_api('volume_pool_create')
        response = self.client.post(POOL_CREATE, {
            'name': 'p', 'total_capacity_gb': '0',
            'reserved_percentage': '101', 'capabilities': 'fast'})
        self.assertEqual(set(response.context['form'].errors),
                         {'total_capacity_gb', 'reserved_percentage',
                          'capabilities'})
        create.assert_not_called()

    def test_the_apis_refusal_stays_in_the_form(self):
        self.mock_api('volume_pool_create', side_effect=climate_api.
                      ReservationBadRequest('Volume pools come from Cinder '
                                            '([volumes] inventory = '
                                            'cinder)', 400))
        response = self.client.post(POOL_CREATE, {
            'name': 'p', 'total_capacity_gb': '5', 'capabilities': ''})
        self.assertContains(response, 'Volume pools come from Cinder')

    def test_delete_says_why_it_was_refused(self):
        self.mock_api('volume_pool_list', return_value=[POOL])
        delete = self.mock_api('volume_pool_delete', side_effect=climate_api.
                               ReservationConflict('Volume pool p1 is '
                                                   'reserved by lease x',
                                                   409))
        self.client.post(POOLS, {'action': 'volume_pools__delete__p1'})
        self.assertEqual(delete.call_args.args[1], 'p1')
        response = self.client.get(POOLS)
        self.assertTrue(any('reserved by lease x' in m
                            for m in self.messages_of(response)))

    def test_a_refused_listing_is_said(self):
        self.mock_api('volume_pool_list', side_effect=climate_api.
                      ReservationUnavailable('Microversion 1.5 is not '
                                             'supported', 406))
        response = self.client.get(POOLS)
        self.assertEqual(response.status_code, 200)
        self.assertTrue(any('Microversion 1.5 is not supported' in m
                            for m in self.messages_of(response)))


class FloatingIPsTests(helpers.AdminTestCase):

    def test_the_addresses(self):
        self.mock_api('floatingip_list', return_value=[FIP])
        response = self.client.get(FIPS)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, '172.24.4.200')
        self.assertContains(response, 'ext-net')
        [row] = response.context['table'].get_rows()
        self.assertEqual(str(row.cells['reservable'].data), 'No')
        self.assertEqual(row.cells['subnet'].value, '-')

    def test_add_an_address_in_its_canonical_form(self):
        create = self.mock_api('floatingip_create', return_value=FIP)
        response = self.client.post(FIP_CREATE, {
            'floating_network_id': ' ext-net ',
            'floating_ip_address': '2001:DB8::0A'})
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, FIPS)
        self.assertEqual(create.call_args.args[1:],
                         ('ext-net', '2001:db8::a'))

    def test_not_an_address(self):
        create = self.mock_api('floatingip_create')
        response = self.client.post(FIP_CREATE, {
            'floating_network_id': 'ext-net',
            'floating_ip_address': '172.24.4.300'})
        self.assertIn('floating_ip_address', response.context['form'].errors)
        create.assert_not_called()

    def test_neutrons_refusal_is_the_apis_sentence(self):
        self.mock_api('floatingip_create', side_effect=climate_api.
                      ReservationBadRequest(
                          'The floating IP 172.24.4.10 is used in '
                          'allocation_pools or gateway_ip in subnet s1 .',
                          400))
        response = self.client.post(FIP_CREATE, {
            'floating_network_id': 'ext-net',
            'floating_ip_address': '172.24.4.10'})
        self.assertContains(response, 'is used in allocation_pools')

    def test_delete(self):
        self.mock_api('floatingip_list', return_value=[FIP])
        delete = self.mock_api('floatingip_delete')
        response = self.client.post(FIPS, {'action': 'floatingips__delete__f1'})
        self.assertRedirectsNoFollow(response, FIPS)
        self.assertEqual(delete.call_args.args[1], 'f1')


class NetworksTests(helpers.AdminTestCase):

    def _post(self, **fields):
        data = {'network_type': 'vlan', 'physical_network': 'physnet1',
                'segment_id': '1001', 'extra_capabilities': ''}
        data.update(fields)
        return self.client.post(NETWORK_CREATE, data)

    def test_the_segments_with_their_capabilities(self):
        self.mock_api('network_list', return_value=[NETWORK])
        response = self.client.get(NETWORKS)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'physnet1')
        self.assertContains(response, '1001')
        self.assertContains(response, 'site=uc')

    def test_add_a_vlan_with_capabilities(self):
        create = self.mock_api('network_create', return_value=NETWORK)
        response = self._post(extra_capabilities='site=uc\nrack = r1')
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, NETWORKS)
        self.assertEqual(create.call_args.args[1], {
            'network_type': 'vlan', 'physical_network': 'physnet1',
            'segment_id': 1001, 'site': 'uc', 'rack': 'r1'})

    def test_vxlan_and_flat_bodies(self):
        create = self.mock_api('network_create', return_value=NETWORK)
        self.assertNoFormErrors(self._post(network_type='vxlan',
                                           physical_network='',
                                           segment_id='70000'))
        self.assertEqual(create.call_args.args[1],
                         {'network_type': 'vxlan', 'segment_id': 70000})
        self.assertNoFormErrors(self._post(network_type='flat',
                                           segment_id=''))
        self.assertEqual(create.call_args.args[1],
                         {'network_type': 'flat',
                          'physical_network': 'physnet1'})

    def test_what_each_type_takes(self):
        create = self.mock_api('network_create')
        cases = [({'physical_network': ''}, {'physical_network'}),
                 ({'segment_id': '4095'}, {'segment_id'}),
                 ({'segment_id': ''}, {'segment_id'}),
                 ({'network_type': 'vxlan'}, {'physical_network'}),
                 ({'network_type': 'flat'}, {'segment_id'}),
                 ({'extra_capabilities': 'site'}, {'extra_capabilities'})]
        for fields, errors in cases:
            response = self._post(**fields)
            self.assertEqual(set(response.context['form'].errors), errors,
                             fields)
        create.assert_not_called()

    def test_a_segment_registered_twice_is_the_apis_sentence(self):
        self.mock_api('network_create', side_effect=climate_api.
                      ReservationConflict('Network segment vlan physnet1 '
                                          '1001 already exists', 409))
        response = self._post()
        self.assertContains(response, 'already exists')

    def test_delete_says_why_it_was_refused(self):
        self.mock_api('network_list', return_value=[NETWORK])
        self.mock_api('network_delete', side_effect=climate_api.
                      ReservationConflict("Can't delete network n1. It is "
                                          'reserved', 409))
        self.client.post(NETWORKS, {'action': 'networks__delete__n1'})
        response = self.client.get(NETWORKS)
        self.assertTrue(any("Can't delete network n1" in m
                            for m in self.messages_of(response)))


class MembersTests(helpers.TestCase):

    def test_a_member_gets_no_inventory(self):
        calls = [self.mock_api(name) for name in (
            'volume_pool_list', 'floatingip_list', 'network_list')]
        for url in (POOLS, POOL_CREATE, FIPS, FIP_CREATE, NETWORKS,
                    NETWORK_CREATE):
            response = self.client.get(url)
            self.assertNotEqual(response.status_code, 200, url)
        for call in calls:
            call.assert_not_called()
        self.mock_api('usage_get', return_value={})
        self.mock_api('quota_get', return_value={})
        response = self.client.get(reverse(
            'horizon:project:reservation_usage:index'))
        for url in (POOLS, FIPS, NETWORKS):
            self.assertNotContains(response, 'href="%s"' % url)
