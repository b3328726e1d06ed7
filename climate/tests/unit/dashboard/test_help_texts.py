"""Help texts in Horizon's help icons: Horizon writes a field's help text
into the icon's ``title`` attribute as safe HTML, so a double quote (the
filters' JSON examples) ended the attribute and put the rest of the text
on the page.  The forms escape them once."""

import html.parser

from django.urls import reverse

from climate.dashboard import validation
from climate.tests.unit.dashboard import helpers


class _Titles(html.parser.HTMLParser):
    """The titles of the help icons, and the text outside any tag."""

    def __init__(self):
        super().__init__()
        self.titles = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if 'help-icon' in (attrs.get('class') or '').split():
            self.titles.append(attrs.get('title'))

    def handle_data(self, data):
        self.text.append(data)


def _parse(response):
    parser = _Titles()
    parser.feed(response.content.decode())
    return parser


class HelpTextTests(helpers.TestCase):

    def test_the_filters_help_is_one_title_in_the_create_form(self):
        page = _parse(self.client.get(reverse('horizon:project:leases:create')))
        self.assertIn(str(validation.FILTER_HELP), page.titles)
        self.assertFalse([t for t in page.text if '"$vcpus"' in t and
                          t.strip().startswith('=')])

    def test_and_in_the_availability_search(self):
        self.mock_api('host_availability')
        page = _parse(self.client.get(
            reverse('horizon:project:availability:index')))
        self.assertIn(str(validation.FILTER_HELP), page.titles)

    def test_escaped_once(self):
        from climate.dashboard import form_fields
        from climate.dashboard.content.leases import forms
        form = forms.CreateLeaseForm(self.request)
        form_fields.escape_help_texts(form.fields)
        self.assertEqual(
            str(form.fields['hypervisor_properties'].help_text).count(
                '&quot;'), str(validation.FILTER_HELP).count('"'))
