"""The create form's resource types and lease types: what each sends to
the API (the body given to the wrapper), and what each refuses before
sending anything."""

import urllib.parse

from django.core.files import uploadedfile
from django.urls import reverse
from django.utils import html

from climate.dashboard.api import climate as climate_api
from climate.plugins.virtual_instance import precreated
from climate.tests.unit.dashboard import helpers

CREATE = reverse('horizon:project:leases:create')
INDEX = reverse('horizon:project:leases:index')
TEMPLATE = helpers.STACK_TEMPLATE


def _data(resource_type, **fields):
    """A create form's post: a lease from 2090-01-01 12:00 for 4 hours of
    ``resource_type`` with ``fields``."""
    data = {'name': 'lab', 'lease_type': '',
            'start_date': '2090-01-01 12:00', 'end_date': '',
            'duration': '4h', 'resource_type': resource_type}
    data.update(fields)
    return data


class CreateCase(helpers.TestCase):

    def setUp(self):
        super().setUp()
        self.create = self.mock_api('lease_create',
                                    return_value=helpers.lease())

    def sent(self, data):
        """The body the form gave the wrapper (it must have given one)."""
        response = self.client.post(CREATE, data)
        self.assertNoFormErrors(response)
        self.assertRedirectsNoFollow(response, INDEX)
        self.create.assert_called_once()
        body = self.create.call_args.args[1]
        self.create.reset_mock()
        return body

    def refused(self, data, field, words):
        """The form shows ``words`` at ``field`` and sends nothing."""
        response = self.client.post(CREATE, data)
        self.assertEqual(response.status_code, 200)
        errors = response.context['form'].errors
        self.assertIn(field, errors, (data, errors))
        self.assertIn(words, ' '.join(errors[field]), errors)
        self.assertContains(response, html.escape(words))
        self.create.assert_not_called()

    def reservation_of(self, data):
        body = self.sent(data)
        self.assertEqual(body['end_date'], '2090-01-01T16:00:00')
        reservation, = body['reservations']
        return reservation


class FormTests(CreateCase):

    def test_every_type_is_offered_and_a_template_may_be_uploaded(self):
        response = self.client.get(CREATE)
        content = response.content.decode()
        for kind in ('host', 'instance', 'server', 'volume', 'floatingip',
                     'network', 'stack'):
            self.assertIn('value="%s"' % kind, content)
        self.assertIn('enctype="multipart/form-data"', content)
        # fields shown for their type only, relabelled per type
        self.assertIn('data-resource_type-volume="Pool properties"',
                      content)
        self.assertIn('data-template_source-file="Template file"', content)
        # marked required while shown, since Django cannot require them
        form = response.context['form']
        for name in ('size_gb', 'template_file', 'server_id', 'vcpus'):
            self.assertEqual(
                form.fields[name].widget.attrs['data-required-when-shown'],
                'true', name)
        self.assertNotIn('data-required-when-shown',
                         form.fields['volume_type'].widget.attrs)

    def test_what_was_typed_for_another_type_is_neither_checked_nor_sent(
            self):
        reservation = self.reservation_of(_data(
            'host', min_hosts=1, max_hosts=1, parameters='not key value',
            size_gb='many', network_name='net',
            required_floatingips='nope'))
        self.assertEqual(reservation, {
            'resource_type': 'physical:host', 'min': 1, 'max': 1,
            'hypervisor_properties': '', 'resource_properties': ''})


class HostTests(CreateCase):

    def test_hosts_with_filters_and_a_snapshot_before_the_end(self):
        reservation = self.reservation_of(_data(
            'host', min_hosts=2, max_hosts=3, before_end='snapshot',
            hypervisor_properties='[">=", "$memory_mb", 65536]',
            resource_properties='["=", "$gpu", "True"]'))
        self.assertEqual(reservation, {
            'resource_type': 'physical:host', 'min': 2, 'max': 3,
            'hypervisor_properties': '[">=", "$memory_mb", 65536]',
            'resource_properties': '["=", "$gpu", "True"]',
            'before_end': 'snapshot'})

    def test_bad_hosts(self):
        self.refused(_data('host', min_hosts=3, max_hosts=2), 'max_hosts',
                     'The maximum is below the minimum.')
        self.refused(_data('host', min_hosts=1, max_hosts=1,
                           resource_properties='{"gpu": true}'),
                     'resource_properties', 'A filter is a JSON list')


class InstanceSlotTests(CreateCase):

    def test_slots_of_a_shape_anywhere(self):
        reservation = self.reservation_of(_data(
            'instance', amount=3, vcpus=2, memory_mb=4096, disk_gb=0,
            affinity='none', resource_properties='["=", "$gpu", "true"]'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:instance', 'amount': 3, 'vcpus': 2,
            'memory_mb': 4096, 'disk_gb': 0, 'affinity': None,
            'resource_properties': '["=", "$gpu", "true"]'})

    def test_slots_of_a_flavor(self):
        reservation = self.reservation_of(_data(
            'instance', amount=2, slot_shape='flavor', slot_flavor='m1.gpu',
            vcpus=1, affinity='true'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:instance', 'amount': 2,
            'flavor_id': 'm1.gpu', 'affinity': True,
            'resource_properties': ''})

    def test_bad_slots(self):
        self.refused(_data('instance', amount=0, vcpus=1, memory_mb=512,
                           disk_gb=1), 'amount', 'greater than or equal')
        self.refused(_data('instance', amount=1, memory_mb=512, disk_gb=1),
                     'vcpus', 'This field is required.')
        self.refused(_data('instance', amount=1, slot_shape='flavor'),
                     'slot_flavor', 'This field is required.')


class ServerTests(CreateCase):

    def test_an_existing_server(self):
        reservation = self.reservation_of(_data(
            'server', server_source='existing', server_id='5b2c-srv',
            server_on_end='shelve', server_name='ignored'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:instance', 'server_id': '5b2c-srv',
            'on_end': 'shelve', 'resource_properties': ''})

    def test_a_server_booted_for_the_lease(self):
        reservation = self.reservation_of(_data(
            'server', server_source='boot', server_name='vm',
            image='img-1', flavor='m1.small', networks='net-a, net-b',
            key_name='mine', security_groups='web, ssh web',
            server_metadata='role = db', server_on_end='snapshot',
            resource_properties='["=", "$gpu", "true"]'))
        server = {'name': 'vm', 'imageRef': 'img-1',
                  'flavorRef': 'm1.small', 'key_name': 'mine',
                  'security_groups': ['web', 'ssh'],
                  'metadata': {'role': 'db'},
                  'networks': [{'uuid': 'net-a'}, {'uuid': 'net-b'}]}
        self.assertEqual(reservation, {
            'resource_type': 'virtual:instance', 'server': server,
            'on_end': 'snapshot',
            'resource_properties': '["=", "$gpu", "true"]'})
        # the boot request is one the API's pre-created mode takes as it
        # is (the served API's static inventory has no Nova to boot on)
        self.assertTrue(precreated.is_precreated(reservation))
        self.assertEqual(precreated.boot_request(reservation['server']),
                         server)
        self.assertEqual(precreated.on_end_of(reservation['on_end']),
                         'snapshot')

    def test_networks_default_to_auto_and_may_be_none(self):
        for typed, sent in (('', 'auto'), ('None', 'none')):
            reservation = self.reservation_of(_data(
                'server', server_source='boot', server_name='vm',
                image='img-1', flavor='m1.small', networks=typed))
            self.assertEqual(reservation['server']['networks'], sent)
            self.assertNotIn('on_end', reservation)

    def test_bad_servers(self):
        self.refused(_data('server', server_source='boot',
                           server_name='vm', flavor='m1.small'),
                     'image', 'This field is required.')
        self.refused(_data('server', server_source='existing'),
                     'server_id', 'This field is required.')
        self.refused(_data('server', server_source='boot',
                           server_name='vm', image='i', flavor='f',
                           networks='auto net-a'),
                     'networks', '"auto" and "none" stand alone')


class VolumeTests(CreateCase):

    def test_gigabytes_in_volumes_of_a_type(self):
        reservation = self.reservation_of(_data(
            'volume', size_gb=200, volume_count=2, volume_type='fast',
            volume_on_end='retain',
            resource_properties='["=", "$backend", "ceph-ssd"]'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:volume', 'size_gb': 200, 'count': 2,
            'volume_type': 'fast', 'on_end': 'retain',
            'resource_properties': '["=", "$backend", "ceph-ssd"]'})

    def test_only_the_size_is_needed(self):
        reservation = self.reservation_of(_data('volume', size_gb=5))
        self.assertEqual(reservation, {'resource_type': 'virtual:volume',
                                       'size_gb': 5})

    def test_volumes_made_at_the_start(self):
        reservation = self.reservation_of(_data(
            'volume', volume_source='listed', size_gb=99,
            volume_specs='data 10 type=fast\n\nboot 2 image=cirros',
            volume_on_end='snapshot'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:volume', 'on_end': 'snapshot',
            'volumes': [{'name': 'data', 'size_gb': 10,
                         'volume_type': 'fast'},
                        {'name': 'boot', 'size_gb': 2,
                         'image_id': 'cirros'}]})

    def test_bad_volumes(self):
        self.refused(_data('volume', size_gb=2, volume_count=3),
                     'volume_count', 'At most one volume a gigabyte: 2')
        self.refused(_data('volume', size_gb=''), 'size_gb',
                     'This field is required.')
        self.refused(_data('volume', volume_source='listed'),
                     'volume_specs', 'This field is required.')
        self.refused(_data('volume', volume_source='listed',
                           volume_specs='data 10\nlogs ten'),
                     'volume_specs', 'Line 2: give its size in GB')
        self.refused(_data('volume', volume_source='listed',
                           volume_specs='data 1 image=a snapshot=b'),
                     'volume_specs', 'Line 1: a volume is made from an '
                                     'image or a snapshot, not both')


class FloatingIPTests(CreateCase):

    def test_addresses_of_a_network_some_required(self):
        reservation = self.reservation_of(_data(
            'floatingip', network_id='ext-net', amount=3,
            required_floatingips='172.24.4.200, 172.24.4.201 172.24.4.200'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:floatingip', 'network_id': 'ext-net',
            'amount': 3,
            'required_floatingips': ['172.24.4.200', '172.24.4.201']})

    def test_bad_floating_ips(self):
        self.refused(_data('floatingip', network_id='ext-net', amount=1,
                           required_floatingips='172.24.4.300'),
                     'required_floatingips',
                     '172.24.4.300 is not an IP address.')
        self.refused(_data('floatingip', network_id='ext-net', amount=1,
                           required_floatingips='10.0.0.1, 10.0.0.2'),
                     'required_floatingips',
                     'More addresses required than asked for (1).')
        self.refused(_data('floatingip', amount=1), 'network_id',
                     'This field is required.')


class NetworkTests(CreateCase):

    def test_a_segment_made_a_network(self):
        reservation = self.reservation_of(_data(
            'network', network_name='my-net', network_description='lab',
            resource_properties='["==", "$physical_network", "physnet1"]',
            network_properties='[">=", "$segment_id", 1050]'))
        self.assertEqual(reservation, {
            'resource_type': 'network', 'network_name': 'my-net',
            'network_description': 'lab',
            'resource_properties': '["==", "$physical_network", '
                                   '"physnet1"]',
            'network_properties': '[">=", "$segment_id", 1050]'})

    def test_bad_segments(self):
        self.refused(_data('network', network_name='n',
                           network_properties='["==", "$site"'),
                     'network_properties', 'This is not JSON')
        self.refused(_data('network'), 'network_name',
                     'This field is required.')


class StackTests(CreateCase):

    def test_a_template_typed_with_parameters_and_environment(self):
        reservation = self.reservation_of(_data(
            'stack', template_source='text', template_text=TEMPLATE,
            parameters='count=3\n\nflavor = m1.large',
            environment='parameter_defaults: {count: 2}',
            stack_name='web', stack_on_start='wake',
            stack_on_end='snapshot'))
        self.assertEqual(reservation, {
            'resource_type': 'virtual:stack', 'template': TEMPLATE.strip(),
            'parameters': {'count': '3', 'flavor': 'm1.large'},
            'environment': 'parameter_defaults: {count: 2}',
            'stack_name': 'web', 'on_start': 'wake', 'on_end': 'snapshot'})

    def test_a_template_uploaded(self):
        upload = uploadedfile.SimpleUploadedFile(
            'web.yaml', TEMPLATE.encode(), content_type='application/yaml')
        reservation = self.reservation_of(_data(
            'stack', template_source='file', template_file=upload,
            template_text='ignored: the file was chosen'))
        self.assertEqual(reservation, {'resource_type': 'virtual:stack',
                                       'template': TEMPLATE.strip()})

    def test_bad_stacks(self):
        self.refused(_data('stack', template_source='text',
                           template_text='- a\n- list'), 'template_text',
                     'The template is a mapping')
        self.refused(_data('stack', template_source='text',
                           template_text='a: [b'), 'template_text',
                     'The template is not YAML or JSON')
        self.refused(_data('stack', template_source='file'),
                     'template_file', 'This field is required.')
        binary = uploadedfile.SimpleUploadedFile('web.qcow2', b'\xff\xfe')
        self.refused(_data('stack', template_source='file',
                           template_file=binary), 'template_file',
                     'web.qcow2 is not a text file')
        self.refused(_data('stack', template_source='text',
                           template_text=TEMPLATE, parameters='count'),
                     'parameters', 'Line 1 is not key=value: count')
        self.refused(_data('stack', template_source='text',
                           template_text=TEMPLATE, environment='[1]'),
                     'environment', 'The environment is a mapping')


class LeaseTypeTests(CreateCase):

    def test_each_lease_type_as_the_api_takes_it(self):
        hosts = {'min_hosts': 1, 'max_hosts': 1}
        for lease_type, start, extra in (
                ('immediate', 'now', {}),
                ('with_retries', 'now', {'max_retries': 0}),
                ('best_effort', 'now', {}),
                ('scheduled', '2090-01-01 12:00', {})):
            body = self.sent(_data('host', lease_type=lease_type,
                                   start_date=start, **dict(hosts, **extra)))
            self.assertEqual(body['lease_type'], lease_type)
            self.assertEqual(body['start_date'], start)
            self.assertEqual('max_retries' in body, bool(extra))
        body = self.sent(_data('volume', size_gb=1, lease_type='scheduled'))
        self.assertEqual(body['lease_type'], 'scheduled')

    def test_what_a_lease_type_refuses(self):
        self.refused(_data('volume', size_gb=1, lease_type='best_effort',
                           start_date='now'),
                     'lease_type', 'This lease type is for physical:host '
                                   'only.')
        self.refused(_data('host', min_hosts=1, max_hosts=1,
                           lease_type='best_effort', start_date='now',
                           hypervisor_properties='["=", "$a", "b"]'),
                     'lease_type', 'A best effort lease takes no host '
                                   'filters')
        self.refused(_data('network', network_name='n',
                           lease_type='with_retries'),
                     'start_date', 'A lease of this type starts now')
        self.refused(_data('network', network_name='n',
                           lease_type='immediate', max_retries=2,
                           start_date='now'),
                     'max_retries', 'Retries are for a lease of type')


class LaterWindowTests(CreateCase):

    def _offered(self, data, error):
        self.create.side_effect = error
        response = self.client.post(CREATE, data)
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, html.escape(error.message))
        return response

    def test_a_volume_refusal_offers_the_window_it_names(self):
        response = self._offered(
            _data('volume', size_gb=20, volume_count=2, volume_type='fast'),
            climate_api.ReservationConflict(
                'Not enough volume capacity available: ... It would fit '
                'for as long from 2090-01-01 14:00:00 UTC.', 409))
        later = CREATE + '?' + urllib.parse.urlencode({
            'name': 'lab', 'resource_type': 'volume', 'size_gb': 20,
            'volume_count': 2, 'volume_type': 'fast',
            'start_date': '2090-01-01 14:00',
            'end_date': '2090-01-01 18:00'})
        self.assertContains(response, 'href="%s"' % html.escape(later))
        # and the form opens with it
        initial = self.client.get(later).context['form'].initial
        self.assertEqual((initial['size_gb'], initial['volume_type'],
                          initial['start_date']),
                         ('20', 'fast', '2090-01-01 14:00'))

    def test_listed_volumes_are_kept_as_their_lines(self):
        response = self._offered(
            _data('volume', volume_source='listed',
                  volume_specs='data 10 type=fast\nboot 2 image=cirros'),
            climate_api.ReservationConflict(
                'Not enough volume capacity available: ... It would fit '
                'for as long from 2090-01-01 14:00:00 UTC.', 409))
        later = CREATE + '?' + urllib.parse.urlencode({
            'name': 'lab', 'resource_type': 'volume',
            'volume_source': 'listed',
            'volume_specs': 'data 10 type=fast\nboot 2 image=cirros',
            'start_date': '2090-01-01 14:00',
            'end_date': '2090-01-01 18:00'})
        self.assertContains(response, 'href="%s"' % html.escape(later))

    def test_a_floating_ip_refusal_is_a_400_and_keeps_the_addresses(self):
        response = self._offered(
            _data('floatingip', network_id='ext', amount=2,
                  required_floatingips='10.0.0.1 10.0.0.2'),
            climate_api.ReservationBadRequest(
                'Not enough floating IPs available: ... It would fit for '
                'as long from 2090-01-02 00:00:00 UTC.', 400))
        later = CREATE + '?' + urllib.parse.urlencode({
            'name': 'lab', 'resource_type': 'floatingip',
            'network_id': 'ext', 'amount': 2,
            'required_floatingips': '10.0.0.1, 10.0.0.2',
            'start_date': '2090-01-02 00:00',
            'end_date': '2090-01-02 04:00'})
        self.assertContains(response, 'href="%s"' % html.escape(later))

    def test_a_lease_that_starts_now_is_offered_the_later_window_as_default(
            self):
        response = self._offered(
            _data('network', network_name='n', lease_type='immediate',
                  start_date='now', duration='', end_date='2090-01-01 00:00'),
            climate_api.ReservationConflict(
                'Not enough networks available: ... One would be free for '
                'as long from 2090-01-02 00:00:00 UTC.', 409))
        self.assertContains(response, html.escape(
            '?name=lab&resource_type=network&network_name=n&start_date='
            '2090-01-02+00%3A00&end_date='))
        self.assertNotContains(response, 'lease_type=immediate')

    def test_a_stack_refusal_is_shown_without_a_link(self):
        response = self._offered(
            _data('stack', template_source='text', template_text=TEMPLATE),
            climate_api.ReservationConflict(
                "the template's resource web/resource_def "
                '(virtual:instance): Not enough hosts available: ... All 3 '
                'would fit for as long from 2090-01-01 14:00:00 UTC.', 409))
        self.assertNotContains(response, 'book_later_window')
