"""Run the YAML HTTP conversations in ``gabbits/`` under pytest.

Gabbi builds one suite per YAML file (``driver.build_tests``); each of its
requests becomes one pytest test, named ``<file>/<test name>``.  The
suite's fixtures (``climate.tests.gabbi.fixtures``) start before its first
request and stop after its last one, or when the next file begins.

This does what ``gabbi.driver.py_test_generator`` does, with two
differences: it passes ``inner_fixtures`` (py_test_generator drops them),
and it does not load the ``gabbi.pytester`` plugin, whose collection hook
inspects *every* collected test and breaks the run when an unrelated
parametrized test has a ``:`` in its id.
"""

import os
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
    suites = sorted((suite for suite in top if suite._tests),
                    key=lambda suite: suite._tests[0].test_base_name)
    return [(suite, case) for suite in suites for case in suite]


CASES = _suites()


def _case_id(case):
    return '%s/%s' % (case.test_base_name, case.test_data['name'])


@pytest.fixture(scope='module')
def running_suite():
    """Which YAML file's fixtures are up; stops the last one at the end."""
    state = {'suite': None}
    yield state
    if state['suite'] is not None:
        state['suite'].stop()


def _enter(state, suite):
    if state['suite'] is suite:
        return
    if state['suite'] is not None:
        previous, state['suite'] = state['suite'], None
        previous.stop()
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


@pytest.mark.parametrize('suite,case', CASES,
                         ids=[_case_id(case) for _suite, case in CASES])
def test_gabbi(running_suite, suite, case):
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
