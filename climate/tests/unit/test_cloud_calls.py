"""climate.clients.calls turns listed cloud errors into CloudUnavailable."""

import pytest

from climate.clients import calls
from climate import exceptions


class CloudError(Exception):
    pass


class OtherCloudError(Exception):
    pass


def test_a_climate_exception_goes_through_untouched():
    error = exceptions.NotFound(kind='Lease', id='x')
    with pytest.raises(exceptions.NotFound) as caught:
        with calls.CloudCalls('reading lease x', 'Nova', (Exception,)):
            raise error
    assert caught.value is error


def test_a_listed_error_is_cloud_unavailable_from_it():
    error = CloudError('boom')
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        with calls.CloudCalls('listing aggregates', 'Nova', (CloudError,)):
            raise error
    assert caught.value.__cause__ is error
    assert str(caught.value) == 'Nova is unavailable: listing aggregates: boom'
    assert caught.value.code == 503


def test_the_reason_uses_the_message_given():
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        with calls.CloudCalls('creating stack s', 'Heat', (CloudError,),
                              message=lambda exc: 'said %s' % exc):
            raise CloudError('no')
    assert str(caught.value) == (
        'Heat is unavailable: creating stack s: said no')


def test_a_mapping_names_the_service_of_each_error():
    errors = {CloudError: 'Placement', OtherCloudError: None}
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        with calls.CloudCalls('connecting', 'Nova', errors):
            raise CloudError('down')
    assert str(caught.value) == 'Placement is unavailable: connecting: down'
    with pytest.raises(exceptions.CloudUnavailable) as caught:
        with calls.CloudCalls('connecting', 'Nova', errors):
            raise OtherCloudError('down')
    assert str(caught.value) == 'Nova is unavailable: connecting: down'


def test_an_unlisted_exception_goes_through():
    with pytest.raises(KeyError):
        with calls.CloudCalls('connecting', 'Nova', (CloudError,)):
            raise KeyError('k')
    with pytest.raises(ValueError):
        with calls.CloudCalls('connecting', 'Nova', {CloudError: None}):
            raise ValueError('v')


def test_no_error_is_no_error():
    with calls.CloudCalls('connecting', 'Nova', (CloudError,)) as ctx:
        pass
    assert ctx.doing == 'connecting' and ctx.service == 'Nova'
