"""README.rst's quick start, run as written on a fresh clone.

The commands are read out of README.rst itself: the literal blocks of its
"Quick start" section and of its "Walk-through" subsection, split into
shell commands (a command runs on over ``\\``-continued lines and open
quotes, as bash reads it).  A README edit that breaks one fails here.

How it runs them, and why:

- **a fresh clone**: ``git clone`` of this checkout's HEAD into a temporary
  directory (commit a README edit before running this test on it); the
  commands run from there, as "from this directory" says.
- **the start command** (the block that runs ``climate-all``) runs as
  written with ``bash -c`` in the background, as in its own terminal.  Its
  ``pip install -e .`` would download and install Climate's ~100
  dependencies (minutes): the test creates ``.venv`` first, with the same
  interpreter the README's ``python3`` names (this one, first on PATH),
  and a ``.pth`` that puts this environment's site-packages (the tox env's)
  on its path.  The README's ``python3 -m venv .venv`` then finds that
  venv and keeps it, and its ``pip install -e .`` finds every dependency
  installed, so it only builds and installs the clone itself (its build
  dependencies come through pip's cache or index, as for any reader);
  pip leaves the tox env's own Climate alone (it is outside the venv) and
  the test checks that ``climate`` then imports from the clone.
- **the port**: the README's address (127.0.0.1:1234, which the test
  checks is still Climate's default and the CLI's) is held in a parallel
  ``tox p`` by the integration tests' climate-api, and may be by any other
  run on the machine; so the server listens on a free port, given through
  oslo.config's environment (``OS_DEFAULT__PORT``), which leaves the
  start command as written.  The walk-through's URLs get that address
  instead of the README's, and the ``climate`` command gets it as
  ``OS_ENDPOINT`` (with no credentials, as the README says).
- **the walk-through** runs in one bash, one command at a time as a reader
  types them (``. .venv/bin/activate`` holds for the commands after it),
  each one's exit status checked, and its output against what the README
  says of it: a lease created, a host created with its facts, the leases
  listed ACTIVE where the README says so (a reader types the next command
  seconds later: a reading command is tried again for a few seconds until
  that holds), the calendar showing the host.  "Two minutes later it is
  TERMINATED" is not waited for.
- **the test command** (the block that runs tox) is not run: it would run
  the whole suite, this test included.  The test checks that it is tox's
  (``tox p`` or ``tox``, every environment of the envlist) and that the
  envlist holds the functional tests, where this test is.

The server is stopped by the PID of the process group the test started.
"""

import configparser
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
import textwrap
import time
import urllib.parse

import pytest

from climate.cli import shell
from climate.conf import api as api_conf
from climate.tests.functional import procs

README = 'README.rst'
QUICK_START = 'Quick start'
WALK_THROUGH = 'Walk-through'
#: the clone's venv and pip install, then the server answering
START_TIMEOUT = 240
STEP_TIMEOUT = 60
#: how long a reading command is tried again until what the README says
#: of it holds
SETTLE = 10
ADORNMENT = set('=-~^"\'`#*+:.')


# -- reading README.rst ------------------------------------------------------

def sections(text):
    """``{title: body}`` of a reStructuredText document, a body being the
    lines from its title to the next title, of whatever level."""
    lines = text.splitlines()
    titles = [i for i in range(len(lines) - 1)
              if lines[i].strip() and not lines[i][0].isspace() and
              len(set(lines[i + 1])) == 1 and lines[i + 1][0] in ADORNMENT
              and len(lines[i + 1]) >= len(lines[i].rstrip())]
    found = {}
    for index, start in enumerate(titles):
        end = titles[index + 1] if index + 1 < len(titles) else len(lines)
        found[lines[start].strip()] = '\n'.join(lines[start + 2:end])
    return found


def _indent(line):
    return len(line) - len(line.lstrip())


def literal_blocks(body):
    """The literal blocks (after a ``::``) of a section body, dedented."""
    lines = body.splitlines()
    blocks = []
    for index, line in enumerate(lines):
        if not line.rstrip().endswith('::'):
            continue
        block = []
        for following in lines[index + 1:]:
            if following.strip() and _indent(following) <= _indent(line):
                break
            block.append(following)
        text = textwrap.dedent('\n'.join(block)).strip('\n')
        if text:
            blocks.append(text)
    return blocks


def _complete(text):
    """Whether bash would read ``text`` as whole commands (no open quote,
    no ``\\`` continuation)."""
    if text.rstrip('\n').endswith('\\'):
        return False
    return subprocess.run(['bash', '-n', '-c', text], capture_output=True,
                          timeout=30).returncode == 0


def shell_commands(block):
    """``(comment, command)`` of a shell block in order: each command with
    the comment lines right above it (what the README says of it)."""
    found, comment, pending = [], [], []
    for line in block.splitlines():
        if pending:
            pending.append(line)
        elif not line.strip():
            comment = []
            continue
        elif line.lstrip().startswith('#'):
            comment.append(line.strip().lstrip('#').strip())
            continue
        else:
            pending = [line]
        text = '\n'.join(pending)
        if _complete(text):
            found.append((' '.join(comment), text))
            comment, pending = [], []
    assert not pending, 'README.rst: a command never ends:\n%s' % (
        '\n'.join(pending))
    return found


class Readme:
    """The quick start's commands, as README.rst gives them."""

    def __init__(self, path):
        with open(path) as f:
            found = sections(f.read())
        for title in (QUICK_START, WALK_THROUGH):
            assert title in found, 'README.rst has no %r section' % title
        blocks = literal_blocks(found[QUICK_START])
        starts = [b for b in blocks if 'climate-all' in b]
        tests = [b for b in blocks if re.search(r'\btox\b', b)]
        assert len(starts) == 1 and len(tests) == 1 and len(blocks) == 2, (
            'README.rst: the quick start should have two blocks, one '
            'starting climate-all and one running tox: %r' % blocks)
        self.start = starts[0]
        self.tests = tests[0]
        walk = literal_blocks(found[WALK_THROUGH])
        assert walk, 'README.rst: the walk-through has no commands'
        self.walk = [cmd for block in walk for cmd in shell_commands(block)]
        text = found[QUICK_START] + found[WALK_THROUGH]
        self.addresses = set(re.findall(r'127\.0\.0\.1:\d+', text))


# -- what the README says of each command ------------------------------------

def _table(text):
    """The rows of a cliff table, each a list of cells."""
    return [[cell.strip() for cell in line.strip().strip('|').split('|')]
            for line in text.splitlines() if line.startswith('|')]


def _fields(text):
    """``{field: value}`` of a cliff ShowOne table (first lines only)."""
    return {row[0]: row[1] for row in _table(text)[1:] if row[0]}


def _listing(text):
    """``[{column: value}]`` of a cliff Lister table."""
    rows = _table(text)
    if not rows:
        return []
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def _words(command):
    return shlex.split(command.replace('\\\n', ' '), comments=True)


def _started(start_date):
    """Whether a lease of that start date has started by now."""
    when = datetime.datetime.fromisoformat(start_date.replace(' ', 'T'))
    return when <= procs.utcnow() + datetime.timedelta(seconds=5)


class Claims:
    """What the README says each walk-through command does, checked
    against what it printed; remembers the leases and hosts made."""

    def __init__(self):
        self.leases = {}  # name: started by now
        self.hosts = []
        self.checked = set()

    @staticmethod
    def reading(command):
        """Whether the command only reads (it may be tried again)."""
        words = _words(command)
        if words[:1] == ['curl']:
            return '-X' not in words and '-d' not in words
        return words[:1] == ['climate'] and len(words) > 1 and \
            words[1].endswith(('-list', '-show', '-calendar'))

    def check(self, comment, command, out):
        """None if the output says what the README says, else why not."""
        words = _words(command)
        if words[:1] == ['curl']:
            return self._curl(comment, words, out)
        if words[:1] == ['climate'] and len(words) > 1:
            method = getattr(self, '_' + words[1].replace('-', '_'), None)
            if method is not None:
                return method(comment, words, out)
        return None

    def _expect_active(self, comment, filtered):
        return filtered or 'ACTIVE' in comment

    def _active_problems(self, statuses, filtered):
        """What is wrong in ``{name: status}`` of a listing that should
        show the started leases ACTIVE."""
        problems = ['%s is %s, not ACTIVE' % (name, statuses.get(name))
                    for name, started in self.leases.items()
                    if started and statuses.get(name) != 'ACTIVE']
        if filtered:
            problems += ['%s is %s in an ACTIVE listing' % (name, status)
                         for name, status in statuses.items()
                         if status != 'ACTIVE']
        return '; '.join(problems) or None

    def _curl(self, comment, words, out):
        url = next(w for w in words if w.startswith('http'))
        path = urllib.parse.urlsplit(url).path
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        try:
            body = json.loads(out)
        except ValueError:
            return 'not JSON: %r' % out[:500]
        if path != '/v1/leases':
            return None
        if '-X' in words and words[words.index('-X') + 1] == 'POST':
            lease = body.get('lease') or {}
            if not lease.get('id') or not lease.get('name'):
                return 'no lease created: %r' % body
            self.leases[lease['name']] = _started(lease['start_date'])
            self.checked.add('lease created')
            return None
        leases = body.get('leases')
        if not isinstance(leases, list):
            return 'no lease listing: %r' % body
        limit = query.get('limit')
        if limit and len(leases) > int(limit[0]):
            return '%d leases for limit=%s' % (len(leases), limit[0])
        filtered = query.get('status') == ['ACTIVE']
        if not self._expect_active(comment, filtered):
            return None
        problem = self._active_problems(
            {lease['name']: lease['status'] for lease in leases}, filtered)
        if problem:
            return problem
        if 'events' in comment:  # "its events show what ran and when"
            for lease in leases:
                if self.leases.get(lease['name']):
                    ran = {e['event_type']: e['status']
                           for e in lease['events']}
                    if ran.get('start_lease') != 'DONE':
                        return '%s: start_lease not DONE: %r' % (
                            lease['name'], lease['events'])
        self.checked.add('leases listed ACTIVE')
        return None

    def _lease_create(self, comment, words, out):
        fields = _fields(out)
        if fields.get('name') != words[2] or not fields.get('id'):
            return 'no lease %s created' % words[2]
        self.leases[words[2]] = _started(fields['start_date'])
        self.checked.add('lease created')
        return None

    def _lease_list(self, comment, words, out):
        filtered = '--status' in words and \
            words[words.index('--status') + 1] == 'ACTIVE'
        if not self._expect_active(comment, filtered):
            return None
        problem = self._active_problems(
            {row['name']: row['status'] for row in _listing(out)}, filtered)
        if problem is None:
            self.checked.add('leases listed ACTIVE')
        return problem

    def _host_create(self, comment, words, out):
        fields = _fields(out)
        if fields.get('hypervisor_hostname') != words[2]:
            return 'no host %s created' % words[2]
        extras = [words[i + 1] for i, w in enumerate(words) if w == '--extra']
        for key, value in (extra.split('=', 1) for extra in extras):
            if fields.get(key) != value:
                return 'host %s: %s is %r, not %r' % (
                    words[2], key, fields.get(key), value)
        self.hosts.append(words[2])
        return None

    def _host_calendar(self, comment, words, out):
        rows = [line.split()[0] for line in out.splitlines()
                if line.strip()]
        missing = [host for host in self.hosts if host not in rows]
        return 'hosts missing: %s' % missing if missing else None


# -- running -----------------------------------------------------------------

class Terminal:
    """One bash reading the walk-through's commands one at a time, as a
    reader's terminal: each command's output and exit status apart, the
    shell's state (an activated venv) kept from one to the next."""

    def __init__(self, cwd, env, workdir):
        self.workdir = workdir
        self.count = 0
        self.popen = subprocess.Popen(
            ['bash', '--noprofile', '--norc'], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd,
            env=env, start_new_session=True, text=True)

    def run(self, command, timeout=STEP_TIMEOUT):
        """``(exit status, stdout, stderr)`` of one command."""
        self.count += 1
        base = os.path.join(self.workdir, 'step-%d' % self.count)
        rc = shlex.quote(base + '.rc')
        # the command reads no stdin: ours is the shell's script
        self.popen.stdin.write('{\n%s\n} >%s 2>%s </dev/null\n'
                               'echo $? >%s.tmp && mv %s.tmp %s\n' % (
                                   command, shlex.quote(base + '.out'),
                                   shlex.quote(base + '.err'), rc, rc, rc))
        self.popen.stdin.flush()
        deadline = time.monotonic() + timeout
        while not os.path.exists(base + '.rc'):
            assert self.popen.poll() is None, (
                'the shell exited (%s) running:\n%s' % (
                    self.popen.returncode, command))
            assert time.monotonic() < deadline, (
                'no answer after %d s from:\n%s' % (timeout, command))
            time.sleep(0.05)
        with open(base + '.rc') as f:
            status = int(f.read())
        with open(base + '.out', errors='replace') as f:
            out = f.read()
        with open(base + '.err', errors='replace') as f:
            err = f.read()
        return status, out, err

    def close(self):
        if self.popen.poll() is None:
            self.popen.stdin.close()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                pass
        _stop_group(self.popen)


def _stop_group(popen):
    """SIGTERM to the process group we started (its id is our child's
    PID: the shell and what it runs), then, if some of it is still there
    after a while, SIGKILL."""
    deadline = time.monotonic() + procs.STOP_TIMEOUT
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(popen.pid, signum)
        except (ProcessLookupError, PermissionError):
            break
        while time.monotonic() < deadline:
            popen.poll()  # reap the shell, the group's leader
            try:
                os.killpg(popen.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)
        deadline = time.monotonic() + procs.STOP_TIMEOUT
    try:
        popen.wait(procs.STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        pass


def _clone(workdir):
    if not os.path.isdir(os.path.join(procs.REPO, '.git')) and \
            not os.path.isfile(os.path.join(procs.REPO, '.git')):
        pytest.fail('%s is not a git checkout: the README test clones it'
                    % procs.REPO, pytrace=False)
    head = subprocess.run(['git', '-C', procs.REPO, 'rev-parse', 'HEAD'],
                          capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip()
    clone = os.path.join(workdir, 'climate')
    subprocess.run(['git', 'clone', '--quiet', '--no-checkout', procs.REPO,
                    clone], check=True, capture_output=True, timeout=120)
    subprocess.run(['git', '-C', clone, 'checkout', '--quiet', head],
                   check=True, capture_output=True, timeout=120)
    return clone


def _prepare_venv(clone):
    """``.venv`` made by the README's interpreter, with this
    environment's packages on its path (see the module's docstring)."""
    venv = os.path.join(clone, '.venv')
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True,
                   capture_output=True, timeout=120)
    site = subprocess.run(
        [os.path.join(venv, 'bin', 'python'), '-c',
         'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    ours = sorted({sysconfig.get_paths()['purelib'],
                   sysconfig.get_paths()['platlib']})
    with open(os.path.join(site, 'zz-test-environment.pth'), 'w') as f:
        f.write(''.join(path + '\n' for path in ours))


def _environment(workdir):
    home = os.path.join(workdir, 'home')
    os.makedirs(home)
    env = procs.no_credentials_env(home)
    # pip's cache is the user's, not the empty HOME's
    env.setdefault('PIP_CACHE_DIR', os.path.join(
        os.environ.get('XDG_CACHE_HOME') or
        os.path.join(os.path.expanduser('~'), '.cache'), 'pip'))
    # the README's python3 is this interpreter
    bindir = os.path.dirname(sys.executable)
    assert os.path.exists(os.path.join(bindir, 'python3')), bindir
    env['PATH'] = bindir + os.pathsep + env.get('PATH', '')
    env.pop('PYTHONPATH', None)
    env.pop('VIRTUAL_ENV', None)
    return env


def _check_tests_command(block, clone):
    """The README's test command is tox's and runs the functional tests."""
    runs = []
    for _, command in shell_commands(block):
        for part in command.split('&&'):
            words = _words(part)
            if 'tox' in words and 'install' not in words:
                runs.append(words[words.index('tox') + 1:])
    assert runs, 'README.rst: the test command runs no tox: %r' % block
    for args in runs:
        assert args in ([], ['p'], ['run-parallel']), (
            'README.rst: tox %s is not the whole suite' % ' '.join(args))
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(os.path.join(clone, 'tox.ini'))
    envlist = [e.strip() for e in tox['tox']['envlist'].split(',')]
    assert 'functional' in envlist, envlist
    assert 'climate/tests/functional' in tox['testenv:functional'][
        'commands'], tox['testenv:functional']['commands']


def test_readme_quick_start_runs_as_written(tmp_path):
    workdir = str(tmp_path)
    clone = _clone(workdir)
    readme = Readme(os.path.join(clone, README))

    # the README's address is Climate's default, and the CLI's
    defaults = {opt.name: opt.default for opt in api_conf.default_opts}
    address = '%s:%d' % (defaults['host'], defaults['port'])
    assert readme.addresses == {address}, readme.addresses
    assert shell.DEFAULT_ENDPOINT == 'http://' + address

    _check_tests_command(readme.tests, clone)

    port = procs.free_port()
    url = 'http://%s:%d' % (procs.HOST, port)
    env = _environment(workdir)
    _prepare_venv(clone)
    log_path = os.path.join(workdir, 'start.log')
    with open(log_path, 'ab') as log:
        server = subprocess.Popen(
            ['bash', '-c', readme.start], cwd=clone, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env=dict(env, OS_DEFAULT__PORT=str(port)))
    terminal = None
    try:
        try:
            procs.wait_answering(server, url, log_path, 'the start command',
                                 START_TIMEOUT)
        except RuntimeError as exc:
            pytest.fail(str(exc), pytrace=False)
        terminal = Terminal(clone, dict(env, OS_ENDPOINT=url), workdir)
        claims = Claims()
        for comment, command in readme.walk:
            command = command.replace('http://' + address, url)
            deadline = time.monotonic() + SETTLE
            while True:
                status, out, err = terminal.run(command)
                problem = ('exit status %d' % status if status else
                           claims.check(comment, command, out))
                if problem is None or not claims.reading(command) or \
                        time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert problem is None, (
                'README.rst walk-through: %s\n(%s)\n$ %s\n%s\n%s\n'
                '--- server log ---\n%s' % (
                    problem, comment, command, out[-3000:], err[-3000:],
                    procs.tail(log_path, 30)))
        # what the README's venv holds is the clone, not this environment
        status, out, err = terminal.run(
            '%s -c "import climate; print(climate.__file__)"' % shlex.quote(
                os.path.join(clone, '.venv', 'bin', 'python')))
        assert status == 0 and out.strip() == os.path.join(
            clone, 'climate', '__init__.py'), (out, err)
        # "SQLite under the current directory"
        assert [name for name in os.listdir(clone)
                if name.endswith('.sqlite')], os.listdir(clone)
        assert claims.checked >= {'lease created', 'leases listed ACTIVE'}, (
            'README.rst: the walk-through no longer creates a lease and '
            'shows it ACTIVE: %s' % claims.checked)
    finally:
        if terminal is not None:
            terminal.close()
        _stop_group(server)
    # SIGTERM stopped it as it should (not the SIGKILL after it)
    assert 'stopped' in procs.tail(log_path, 5), procs.tail(log_path)
