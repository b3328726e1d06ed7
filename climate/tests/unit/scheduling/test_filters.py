"""The host filter language: parsing, errors that say where, evaluation."""

import json

import pytest

from climate import exceptions
from climate.scheduling import filters


def _err(value, names=None):
    with pytest.raises(exceptions.InvalidInput) as info:
        filters.parse(value, 'resource_properties', names)
    return str(info.value)


@pytest.mark.parametrize('empty', [None, '', '  ', '[]', []])
def test_empty_filters_match_everything(empty):
    tree = filters.parse(empty, 'f')
    assert tree is None
    assert filters.evaluate(tree, {})


def test_blazar_string_form():
    tree = filters.parse('["=", "$memory_mb", "4096"]', 'f')
    assert tree == filters.Cmp('=', 'memory_mb', '4096')
    assert filters.evaluate(tree, {'memory_mb': '4096'})
    assert filters.evaluate(tree, {'memory_mb': 4096})
    assert not filters.evaluate(tree, {'memory_mb': '2048'})


def test_double_equals_is_equals():
    tree = filters.parse('["==", "$backend", "ceph-ssd"]', 'f')
    assert tree == filters.parse('["=", "$backend", "ceph-ssd"]', 'f')
    assert filters.evaluate(tree, {'backend': 'ceph-ssd'})
    assert not filters.evaluate(tree, {'backend': 'lvm'})


def test_numbers_compare_as_numbers_when_both_sides_are():
    tree = filters.parse(['>', '$cores', '9'], 'f')
    # Blazar compared strings: "10" < "9"
    assert filters.evaluate(tree, {'cores': '10'})
    assert not filters.evaluate(tree, {'cores': '8'})
    assert filters.evaluate(filters.parse(['=', '$x', 2], 'f'),
                            {'x': '2.0'})
    # text on one side: compared as text
    assert filters.evaluate(filters.parse(['>', '$rack', 'a'], 'f'),
                            {'rack': 'b'})
    assert not filters.evaluate(filters.parse(['>', '$rack', '9'], 'f'),
                                {'rack': '10a'})


def test_literal_first_flips_the_comparison():
    tree = filters.parse(['<', 4, '$cores'], 'f')
    assert tree == filters.Cmp('>', 'cores', 4)


def test_logic_in_and_not():
    tree = filters.parse(json.dumps(
        ['and', ['in', '$gpu', 'a100', 'h100'],
         ['or', ['>=', '$ram', 512], ['not', ['=', '$rack', 'r1']]]]), 'f')
    assert filters.evaluate(tree, {'gpu': 'h100', 'ram': '256',
                                   'rack': 'r2'})
    assert filters.evaluate(tree, {'gpu': 'a100', 'ram': '1024',
                                   'rack': 'r1'})
    assert not filters.evaluate(tree, {'gpu': 'a100', 'ram': '256',
                                       'rack': 'r1'})
    assert not filters.evaluate(tree, {'gpu': 'v100', 'ram': '1024'})
    # not matches hosts lacking the property; a comparison never does
    assert filters.evaluate(filters.parse(['not', ['=', '$a', 1]], 'f'), {})
    assert not filters.evaluate(filters.parse(['!=', '$a', 1], 'f'), {})
    assert filters.names_in(tree) == {'gpu', 'ram', 'rack'}


def test_booleans_are_blazar_text():
    tree = filters.parse(['=', '$gpu', True], 'f')
    assert filters.evaluate(tree, {'gpu': 'True'})


@pytest.mark.parametrize('value, where', [
    ('[=', 'is not valid JSON'),
    ('{"a": 1}', "resource_properties: expected a list"),
    (['like', '$a', 'b'], 'resource_properties[0]: unknown operator "like"'),
    ([1, '$a', 'b'], 'resource_properties[0]: unknown operator 1'),
    (['=', '$a'], "resource_properties: '=' takes a property and a value"),
    (['=', 'a', 'b'], 'resource_properties[1]: one side'),
    (['=', '$a', None], 'resource_properties[2]: expected a string or a '
                        'number, not null'),
    (['=', '$a', ['x']], 'resource_properties[2]: expected a string or a '
                         'number, not a list'),
    (['and', ['=', '$a', 1], ['or', ['=', '$b', 1], ['nope']]],
     'resource_properties[2][2][0]: unknown operator "nope"'),
    (['not', ['=', '$a', 1], ['=', '$b', 1]], "'not' takes exactly one"),
    (['and'], "'and' takes at least one filter"),
    (['in', '$a'], "'in' takes a property and at least one value"),
    (['in', 'a', 'b'], "resource_properties[1]: the first argument of 'in'"),
    (['=', '$a', '$b'], 'not with another property'),
    (['=', '$' + 'x' * 300, 1], 'at most 255'),
])
def test_errors_name_the_place(value, where):
    assert where in _err(value)


def test_known_names_only_when_given():
    message = _err(['=', '$ram', 1], names=('memory_mb', 'vcpus'))
    assert 'unknown property $ram' in message
    assert '$memory_mb' in message


def test_depth_and_size_are_bounded():
    deep = ['=', '$a', 1]
    for _ in range(filters.MAX_DEPTH + 1):
        deep = ['not', deep]
    assert 'nests deeper' in _err(deep)
    wide = ['or'] + [['=', '$a', i] for i in range(filters.MAX_NODES + 1)]
    assert 'more than' in _err(wide)


@pytest.mark.parametrize('text, number', [
    ('12', 12.0), ('-3', -3.0), (' 2.5 ', 2.5), ('1e5', None),
    ('nan', None), ('0x10', None), ('', None), (7, 7.0), (True, None),
    (float('inf'), None)])
def test_as_number(text, number):
    assert filters.as_number(text) == number
