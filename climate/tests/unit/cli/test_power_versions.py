"""The CLI's power and energy calls ask for microversion 1.13 (each
host's measured watts) and ask again at 1.12 an API that does not serve
it, unless the user forced a version."""

import pytest

from climate.cli import client as cli_client


class FakeAPI:
    """The ``Client.request`` of an API serving up to ``newest``."""

    def __init__(self, newest, api_version=None):
        self.newest = newest
        self.api_version = api_version
        self.asked = []

    def request(self, method, path, body=None, params=None, version=None):
        version = self.api_version or version
        self.asked.append(version)
        if tuple(map(int, version.split('.'))) > tuple(
                map(int, self.newest.split('.'))):
            raise cli_client.APIError(406, 'Version %s is not supported'
                                      % version)
        return {'hosts_power': [{'version': version}],
                'host_power': {'version': version},
                'energy': {'version': version}}


CALLS = {
    'power-list': lambda c: cli_client.Hosts(c).power_list()[0],
    'power-show': lambda c: cli_client.Hosts(c).power('1'),
    'energy': lambda c: cli_client.Usage(c).energy(),
}


@pytest.mark.parametrize('call', sorted(CALLS))
def test_the_newest_served_version_is_asked(call):
    api = FakeAPI('1.13')
    assert CALLS[call](api) == {'version': '1.13'}
    assert api.asked == ['1.13']


@pytest.mark.parametrize('call', sorted(CALLS))
def test_an_older_api_is_asked_again_at_1_12(call):
    api = FakeAPI('1.12')
    assert CALLS[call](api) == {'version': '1.12'}
    assert api.asked == ['1.13', '1.12']


def test_a_forced_version_is_not_negotiated():
    api = FakeAPI('1.11', api_version='1.11')
    assert CALLS['energy'](api) == {'version': '1.11'}
    api = FakeAPI('1.12', api_version='1.14')
    with pytest.raises(cli_client.APIError) as info:
        CALLS['energy'](api)
    assert info.value.status == 406
    assert api.asked == ['1.14']


def test_other_errors_are_not_retried():
    class Refusing(FakeAPI):
        def request(self, *args, **kwargs):
            self.asked.append(kwargs.get('version'))
            raise cli_client.APIError(403, 'not an administrator')

    api = Refusing('1.13')
    with pytest.raises(cli_client.APIError):
        CALLS['power-list'](api)
    assert api.asked == ['1.13']
