"""The processes of a configuration: name, port, command, and what their fingerprint covers.

A service whose fingerprint (its command line, its configuration files and the directories of
its extra code) changed since it started is restarted by "up".
"""
import glob
import hashlib
import os

from cloud_harness.settings import IP

#: Files of a directory that a fingerprint covers (one level, not below).
FINGERPRINTED = (".conf", ".ini", ".json", ".yaml", ".py")


class Service:
    def __init__(self, name, port, files, command):
        self.name = name
        self.port = port          # None: no API
        self.files = files        # files and directories the fingerprint covers
        self.command = command    # argv (env VAR=VALUE ... program args)

    def __repr__(self):
        return f"Service({self.name!r}, {self.port!r})"


def path_dirs(path):
    """The directories of a PYTHONPATH-like value (":"-separated) that exist."""
    return [d for d in path.split(":") if d and os.path.isdir(d)]


def venv_package_dir(venv, package):
    """Where the venv holds PACKAGE (a dotted name), or a path that says it has none."""
    relative = package.replace(".", "/")
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", relative)))
    return found[0] if found else os.path.join(venv, "lib", "site-packages", relative)


def fake_volume_driver_file(venv):
    return os.path.join(venv_package_dir(venv, "cinder.volume.drivers"), "climate_cloud_fake.py")


def fake_compute_driver_file(venv):
    return os.path.join(venv_package_dir(venv, "nova.virt"), "climate_cloud_fake.py")


def gunicorn(s, name, port, confdir, *env):
    command = ["env", *env, f"{s.bin}/gunicorn", "--bind", f"{IP}:{port}", "--workers", "1",
               "--worker-class", "gthread", "--threads", s["WSGI_THREADS"], "--timeout", "300",
               "--graceful-timeout", "5", "--chdir", f"{s.etc}/wsgi", "--no-control-socket",
               "--name", f"cc-{name}", f"{name.removesuffix('-api')}_wsgi:application"]
    return Service(name, port, confdir.split(), command)


def define(s):
    """The processes of settings S, in start order."""
    etc, b, ports = s.etc, s.bin, s.ports
    nova_conf, cinder_conf = f"{etc}/nova/nova.conf", f"{etc}/cinder/cinder.conf"
    found = []
    for api in ("keystone", "placement", "glance", "neutron"):
        if s.enabled(api):
            found.append(gunicorn(s, api, ports[api], f"{etc}/{api}",
                                  f"OS_{api.upper()}_CONFIG_DIR={etc}/{api}"))
    if s.enabled("nova"):
        found.append(gunicorn(s, "nova-api", ports["nova"],
                              f"{nova_conf} {etc}/nova/api-paste.ini",
                              f"OS_NOVA_CONFIG_DIR={etc}/nova"))
        found.append(Service("nova-conductor", None, [nova_conf],
                             [f"{b}/nova-conductor", "--config-file", nova_conf]))
        # only the scheduler reads the filter settings (scheduler.conf) and the extra path
        found.append(Service(
            "nova-scheduler", None,
            [nova_conf, f"{etc}/nova/scheduler.conf"] + path_dirs(s["NOVA_FILTER_PATH"]),
            ["env", f"PYTHONPATH={s['NOVA_FILTER_PATH']}", f"{b}/nova-scheduler",
             "--config-file", nova_conf, "--config-file", f"{etc}/nova/scheduler.conf"]))
        for host in s.compute_hosts:
            found.append(Service(
                f"nova-compute-{host}", None, [nova_conf, f"{etc}/nova/compute-{host}.conf"],
                ["env", f"CC_FAKE_VCPUS={s['FAKE_VCPUS']}", f"CC_FAKE_RAM_MB={s['FAKE_RAM_MB']}",
                 f"CC_FAKE_DISK_GB={s['FAKE_DISK_GB']}", f"{b}/nova-compute",
                 "--config-file", nova_conf, "--config-file", f"{etc}/nova/compute-{host}.conf"]))
    if s.enabled("cinder"):
        found.append(gunicorn(s, "cinder-api", ports["cinder"], f"{etc}/cinder"))
        found.append(Service(
            "cinder-scheduler", None, [f"{etc}/cinder"] + path_dirs(s["CINDER_FILTER_PATH"]),
            ["env", f"PYTHONPATH={s['CINDER_FILTER_PATH']}", f"{b}/cinder-scheduler",
             "--config-file", cinder_conf]))
        found.append(Service(
            "cinder-volume", None, [f"{etc}/cinder", fake_volume_driver_file(s.venv)],
            [f"{b}/cinder-volume", "--config-file", cinder_conf]))
    if s.enabled("heat"):
        found.append(gunicorn(s, "heat-api", ports["heat"], f"{etc}/heat"))
        # a resource plugin that changed restarts heat-engine
        found.append(Service(
            "heat-engine", None,
            [f"{etc}/heat"] + path_dirs(s["HEAT_PLUGIN_DIRS"].replace(",", ":")),
            [f"{b}/heat-engine", "--config-file", f"{etc}/heat/heat.conf"]))
    return found


def fingerprint_input(files, command):
    """What a fingerprint digests: the command's words one a line, then each file's bytes
    (a directory: its FINGERPRINTED files, one level down, in name order)."""
    chunks = [("".join(f"{word}\n" for word in command)).encode()]
    for path in files:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(FINGERPRINTED)
                           and os.path.isfile(os.path.join(path, n)))
            members = [os.path.join(path, n) for n in names]
        else:
            members = [path]
        for member in members:
            try:
                with open(member, "rb") as f:
                    chunks.append(f.read())
            except OSError:
                pass  # a missing file adds nothing
    return b"".join(chunks)


def fingerprint(service):
    return hashlib.sha256(fingerprint_input(service.files, service.command)).hexdigest()[:16]
