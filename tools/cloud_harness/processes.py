"""Starting, watching and stopping the cloud's processes (only those the harness recorded)."""
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

from cloud_harness import pidfiles
from cloud_harness import services as services_mod
from cloud_harness.output import die
from cloud_harness.output import say
from cloud_harness.settings import IP

#: How long a stop waits for TERM before it KILLs what is left.
STOP_GRACE = 10.0


def port_in_use(port, host=IP):
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def check_ports(s, services):
    """The ports of services that are not running yet must be free, before anything else."""
    for svc in services:
        if svc.port and not pidfiles.alive(s.run, svc.name) and port_in_use(svc.port):
            die(f"port {svc.port} (for {svc.name}) is taken by another program: set PORT_OFFSET")


def launch(s, svc):
    """Start SVC in a session of its own; record "PID STARTTIME" and its fingerprint."""
    if svc.port and port_in_use(svc.port):
        die(f"port {svc.port} (for {svc.name}) is taken by another program: set PORT_OFFSET")
    pid_file = os.path.join(s.run, f"{svc.name}.pid")
    if os.path.exists(pid_file):
        os.remove(pid_file)
    with open(os.path.join(s.logs, f"{svc.name}.log"), "a") as log:
        log.write(pidfiles.start_line(time.strftime("%Y-%m-%d %H:%M:%S"),
                                      shlex.join(svc.command)))
        log.flush()
        try:
            proc = subprocess.Popen(svc.command, cwd=s.cloud_dir, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as e:
            log.write(f"{e}\n")
            log.flush()
            pidfiles.service_failed(s.logs, svc.name, f"could not be launched: {e}")
    start = pidfiles.starttime(proc.pid)
    if start is None or proc.poll() is not None:
        pidfiles.service_failed(s.logs, svc.name, "could not be launched")
    pidfiles.write_record(s.run, svc.name, proc.pid, start)
    with open(os.path.join(s.run, f"{svc.name}.fp"), "w") as f:
        f.write(services_mod.fingerprint(svc) + "\n")


def recorded_fingerprint(s, name):
    try:
        with open(os.path.join(s.run, f"{name}.fp")) as f:
            return f.read().strip()
    except OSError:
        return None


def ensure_running(s, wanted):
    """Restart those of WANTED whose command or configuration changed (all stopped
    together), then start every one that is not running."""
    stale = [svc.name for svc in wanted if pidfiles.alive(s.run, svc.name)
             and recorded_fingerprint(s, svc.name) != services_mod.fingerprint(svc)]
    if stale:
        say(f"start: configuration changed, restarting: {' '.join(stale)}")
        stop(s, stale)
    for svc in wanted:
        if not pidfiles.alive(s.run, svc.name):
            launch(s, svc)


def group_alive(pid):
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(s, names=None):
    """TERM each recorded process group, wait up to STOP_GRACE seconds, then KILL what is
    left (Nova's services may ignore SIGTERM for a long while). Only the PIDs recorded in
    pid files, still the processes they were, are signalled."""
    names = list(names) if names else pidfiles.recorded_names(s.run)
    pids = []
    for name in names:
        pid = pidfiles.pid_of(s.run, name)
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            pids.append(pid)
        _remove(os.path.join(s.run, f"{name}.fp"))
    deadline = time.monotonic() + STOP_GRACE
    while pids and any(group_alive(p) for p in pids) and time.monotonic() < deadline:
        _reap(pids)
        time.sleep(0.25)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _reap(pids)
    for name in names:
        _remove(os.path.join(s.run, f"{name}.pid"))


def _reap(pids):
    """Collect the exit of those of PIDS that are this process's children (services it
    started in this run): until then they linger as zombies and their groups seem alive."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def status_rows(s, services):
    """(name, PID or None, RSS MiB or None) of each service."""
    page = os.sysconf("SC_PAGE_SIZE")
    rows = []
    for svc in services:
        pid = pidfiles.pid_of(s.run, svc.name)
        if pid is None:
            rows.append((svc.name, None, None))
        else:
            pages = sum(rss for _, rss in pidfiles.session_members(pid))
            rows.append((svc.name, pid, pages * page // (1024 * 1024)))
    return rows


#: The services are on loopback: no proxy of the environment between.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def answers(url, timeout=3):
    """Whether an HTTP server answers at URL (any status)."""
    try:
        with _DIRECT.open(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def wait_http(s, name, url):
    """Until URL answers; fail when NAME dies or START_TIMEOUT passes."""
    deadline = time.monotonic() + s.start_timeout
    while not answers(url):
        if not pidfiles.alive(s.run, name):
            pidfiles.service_failed(s.logs, name, "exited while starting")
        if time.monotonic() > deadline:
            pidfiles.service_failed(s.logs, name,
                                    f"no answer on {url} within {s.start_timeout:.0f} s")
        time.sleep(0.25)
