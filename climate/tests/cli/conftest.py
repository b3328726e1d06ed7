"""A real ``climate-all`` for the CLI tests, and ways to run the clients.

- ``climate_all`` (session): ``climate-all`` as a subprocess on a free
  127.0.0.1 port with a temporary SQLite database (embedded default:
  in-process messaging, noauth), stopped by PID at the end; its log is
  printed when it fails to start.
- :func:`run`: a console script (``climate``, ``blazar``, ``openstack``)
  as a subprocess, no Keystone anywhere: its environment has no ``OS_*``
  variable and ``HOME`` points to an empty directory, so no clouds.yaml of
  the machine is read.
- ``cli``: ``climate`` run in this process through its cliff App (the same
  code and the same HTTP, without the ~1 s start-up of a subprocess), for
  the many small bad-input cases.
"""

import io
import logging
import os
import subprocess
import sys

import pytest

from climate.cli import shell
from climate.tests.functional import procs

START_TIMEOUT = 60
COMMAND_TIMEOUT = 60


class Result:
    def __init__(self, argv, code, out, err):
        self.argv = argv
        self.code = code
        self.out = out
        self.err = err

    def __repr__(self):
        return '<%s -> %s\nstdout: %s\nstderr: %s>' % (
            ' '.join(self.argv), self.code, self.out, self.err)


clean_env = procs.no_credentials_env


def _identity(project, roles):
    """noauth options: a project of its own is a member's, not an admin's
    (admins see every project's leases)."""
    argv = []
    if project:
        argv += ['--noauth-project-id', project]
        roles = roles or 'member,reader'
    if roles:
        argv += ['--noauth-roles', roles]
    return argv


class ClimateAll:
    def __init__(self, workdir):
        self.workdir = str(workdir)
        self.port = procs.free_port()
        self.url = 'http://%s:%d' % (procs.HOST, self.port)
        self.home = os.path.join(self.workdir, 'home')
        os.makedirs(self.home)
        self.config = os.path.join(self.workdir, 'climate.conf')
        self.log_path = os.path.join(self.workdir, 'climate-all.log')
        with open(self.config, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\nport = %d\nstate_path = %s\n'
                    # small pages: lease-list must follow the next links
                    '[api]\ndefault_limit = 3\n'
                    '[database]\nconnection = sqlite:///%s\n'
                    '[oslo_messaging_notifications]\ndriver = noop\n' % (
                        procs.HOST, self.port, self.workdir,
                        os.path.join(self.workdir, 'climate.sqlite')))
        self.popen = None

    def start(self):
        cmd = procs.console_script('climate-all') + ['--config-file',
                                                     self.config]
        with open(self.log_path, 'ab') as log:
            self.popen = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
                cwd=self.workdir, env=clean_env(self.home))
        procs.wait_answering(self.popen, self.url, self.log_path,
                             'climate-all', START_TIMEOUT)

    def stop(self):
        if self.popen is not None:
            procs.Proc('climate-all', self.popen, self.log_path).stop()

    def api(self, project=None):
        """The v1 API over plain HTTP, to check what the CLI did."""
        return procs.Client(self.url, project=project or 'embedded',
                            user='embedded', version='1.1',
                            roles='member,reader' if project else
                            'admin,member,reader')

    def run(self, *args, script='climate', endpoint=True, project=None,
            roles=None, timeout=COMMAND_TIMEOUT):
        """A console script as a subprocess against this Climate."""
        argv = procs.console_script(script)
        if endpoint:
            if script == 'climate':
                argv += ['--os-endpoint', self.url]
            else:  # Blazar's clients need the /v1 root
                argv += ['--os-auth-type', 'none',
                         '--os-endpoint', self.url + '/v1']
        argv += _identity(project, roles)
        argv += [str(a) for a in args]
        done = subprocess.run(argv, capture_output=True, text=True,
                              timeout=timeout, env=clean_env(self.home),
                              stdin=subprocess.DEVNULL)
        return Result(argv, done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope='session')
def climate_all(tmp_path_factory):
    server = ClimateAll(tmp_path_factory.mktemp('climate-all'))
    try:
        server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


class InProcess:
    """``climate`` through its cliff App, in this process."""

    def __init__(self, server):
        self.server = server

    def __call__(self, *args, project=None, roles=None, endpoint=True):
        argv = ['--os-endpoint', self.server.url] if endpoint else []
        argv += _identity(project, roles)
        argv += [str(a) for a in args]
        out, err = io.StringIO(), io.StringIO()
        root = logging.getLogger('')
        handlers, level = list(root.handlers), root.level
        # osc-lib logs errors to sys.stderr through a handler of its own
        saved, sys.stderr = sys.stderr, err
        try:
            try:
                code = shell.ClimateShell(stdout=out, stderr=err).run(argv)
            except SystemExit as exc:  # argparse
                code = exc.code
        finally:
            sys.stderr = saved
            for handler in list(root.handlers):
                if handler not in handlers:
                    root.removeHandler(handler)
            root.setLevel(level)
        return Result(['climate'] + argv, code, out.getvalue(),
                      err.getvalue())


@pytest.fixture
def cli(climate_all, monkeypatch):
    for key in list(os.environ):
        if key.startswith(('OS_', 'CLIMATE_NOAUTH')):
            monkeypatch.delenv(key)
    monkeypatch.setenv('HOME', climate_all.home)
    return InProcess(climate_all)
