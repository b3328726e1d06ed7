"""The benchmarks run by hand, not in CI: these checks keep them runnable.

(A method of the benchmarks' ``Climate`` once ended up inside a function
by a misplaced move, and every benchmark that measured latency failed
with an AttributeError at its first request.)
"""

import ast
import importlib
import os
import shutil
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                          os.pardir, 'benchmarks')
MODULES = sorted(name[:-3] for name in os.listdir(BENCHMARKS)
                 if name.endswith('.py'))
#: the name the benchmarks give a ``common.Climate``
ENV = 'env'
#: run on their own, against the cloud of tools/cloud-harness.sh
STANDALONE = {'bench_fanout'}


@pytest.fixture(scope='module')
def benchmarks():
    sys.path.insert(0, os.path.abspath(BENCHMARKS))
    try:
        yield importlib.import_module('common')
    finally:
        sys.path.remove(os.path.abspath(BENCHMARKS))
        # their top-level names (common, run, bulk...) are not left for
        # another test's import to find
        for name in MODULES:
            sys.modules.pop(name, None)


@pytest.mark.parametrize('name', MODULES)
def test_each_benchmark_imports(benchmarks, name):
    importlib.import_module(name)


def test_run_names_every_benchmark_module(benchmarks):
    run = importlib.import_module('run')
    modules = {getattr(func, '__module__', None)
               for func in run.BENCHMARKS.values()}
    assert {m for m in MODULES if m.startswith('bench_')} - STANDALONE <= \
        modules


def test_what_the_benchmarks_use_of_their_climate_exists(benchmarks):
    env = benchmarks.Climate()
    try:
        have = set(dir(env)) | set(vars(env))
    finally:
        shutil.rmtree(env.workdir, ignore_errors=True)
    used = {}
    for name in MODULES:
        with open(os.path.join(BENCHMARKS, name + '.py')) as source:
            tree = ast.parse(source.read())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef) or _assigns_env(func):
                continue  # (an ``env`` of another kind: a process's)
            for node in ast.walk(func):
                if isinstance(node, ast.Attribute) and isinstance(
                        node.value, ast.Name) and node.value.id == ENV:
                    used.setdefault(node.attr, set()).add(name)
    assert used, 'no benchmark uses a Climate named %r any more' % ENV
    missing = {attr: sorted(where) for attr, where in used.items()
               if attr not in have}
    assert not missing, missing


def _assigns_env(func):
    return any(isinstance(node, ast.Assign) and any(
        isinstance(target, ast.Name) and target.id == ENV
        for target in node.targets) for node in ast.walk(func))


def test_the_power_simulation_runs_small_and_starts_booked_leases_on_time(
        benchmarks):
    bench_power = importlib.import_module('bench_power')
    figures = [row for row in bench_power.run(['40:3'])]
    always_on, plans = figures[0], figures[1:]
    assert always_on['host_hours_off'] == 0 and not always_on['enabled']
    assert all(row['host_hours_off'] > 0 and row['late_ahead'] == 0 and
               row['starts_ahead'] > 0 for row in plans)
