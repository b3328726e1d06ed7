"""The console scripts start quietly: no eventlet in the process.

eventlet is installed (oslo.service depends on it) and futurist imports it
when it can, which printed eventlet's multi-line EventletDeprecationWarning
at every start; ``climate/__init__.py`` keeps it out.  Each check runs in
a subprocess with Python's default warning filters.
"""

import os
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)
TIMEOUT = 60


def _clean_env():
    # default warning filters, as an operator's shell has them
    return {k: v for k, v in os.environ.items() if k != 'PYTHONWARNINGS'}


@pytest.mark.parametrize('command', ['climate-all', 'climate-api',
                                     'climate-manager', 'climate-db-manage',
                                     'climate-status'])
def test_commands_print_no_eventlet_banner(command, tmp_path):
    proc = subprocess.run([os.path.join(BIN, command), '--help'],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env=_clean_env(), cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert 'usage:' in proc.stdout
    assert 'Eventlet' not in proc.stderr + proc.stdout
    assert 'Warning' not in proc.stderr


_IMPORTS = '''
import sys
import climate.cmd.all, climate.cmd.api, climate.cmd.manager
import climate.wsgi.api
import futurist._utils
import oslo_messaging
loaded = sorted(name for name, module in sys.modules.items()
                if name.split('.')[0] == 'eventlet' and module is not None)
print('eventlet modules:', loaded)
print('futurist sees eventlet:', futurist._utils.EVENTLET_AVAILABLE)
'''


def test_no_entry_point_imports_eventlet(tmp_path):
    proc = subprocess.run([sys.executable, '-c', _IMPORTS],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env=_clean_env(), cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['eventlet modules: []',
                                        'futurist sees eventlet: False']
    assert proc.stderr == ''
