"""Run the YAML HTTP conversations in ``gabbits/`` under pytest.

Gabbi builds one suite per YAML file (``driver.build_tests``); each becomes
a test class and each of its requests one pytest test, named ``<file>/<test
name>``.  The suite's fixtures (``climate.tests.gabbi.fixtures``) start
before its first request and stop after its last one.

This does what ``gabbi.driver.py_test_generator`` does, with two
differences: it passes ``inner_fixtures`` (py_test_generator drops them),
and it does not load the ``gabbi.pytester`` plugin, whose collection hook
inspects *every* collected test and breaks the run when an unrelated
parametrized test has a ``:`` in its id.
"""

import os
import re
import unittest

from gabbi import driver
import pytest

from climate.tests.gabbi import fixtures

TESTS_DIR = os.path.join(os.path.dirname(__file__), 'gabbits')


def _suites():
    top = driver.build_tests(
        TESTS_DIR, unittest.TestLoader(), intercept=fixtures.setup_app,
        fixture_module=fixtures, inner_fixtures=[fixtures.RelativeDates],
        test_loader_name=__name__)
    return sorted((suite for suite in top if suite._tests),
                  key=lambda suite: suite._tests[0].test_base_name)


def _case_id(case):
    return '%s/%s' % (case.test_base_name, case.test_data['name'])


@pytest.fixture(scope='class')
def running_suite():
    """The class's YAML file's fixtures, up from its first request to
    its last."""
    state = {'suite': None}
    yield state
    if state['suite'] is not None:
        state['suite'].stop()


def _enter(state, suite):
    if state['suite'] is suite:
        return
    result = unittest.TestResult()
    try:
        suite.start(result, list(suite))
    except BaseException:
        suite.stop()
        raise
    if result.skipped:
        pytest.skip(result.skipped[0][1])
    state['suite'] = suite


def _format(problems):
    return '\n'.join(text for _test, text in problems)


def _run(running_suite, suite, case):
    _enter(running_suite, suite)
    result = unittest.TestResult()
    case.run(result)
    if result.errors or result.failures:
        pytest.fail(_format(result.errors + result.failures),
                    pytrace=False)
    if result.unexpectedSuccesses:
        pytest.fail('%s passed but is marked xfail' % _case_id(case))
    if result.expectedFailures:
        pytest.xfail(_format(result.expectedFailures))
    if result.skipped:
        pytest.skip(result.skipped[0][1])
    assert case.has_run


def _suite_class(suite):
    """A test class of one YAML file's requests.  A class, so that a
    parallel run (pytest-xdist, ``--dist loadscope``) keeps the file's
    requests together and in order on one worker: each builds on the one
    before it (gabbi runs a request's prior ones first otherwise, after
    its own dates were set)."""
    cases = list(suite)

    @pytest.mark.parametrize('case', cases,
                             ids=[_case_id(case) for case in cases])
    def test_gabbi(self, running_suite, case):
        _run(running_suite, suite, case)

    name = 'TestGabbi_' + re.sub(r'\W', '_', cases[0].test_base_name)
    return name, type(name, (), {'test_gabbi': test_gabbi})


for _name, _class in map(_suite_class, _suites()):
    globals()[_name] = _class
