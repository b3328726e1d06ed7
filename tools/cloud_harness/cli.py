"""cloud-harness - a real OpenStack control plane on 127.0.0.1 for Climate's integration tests.

Installs from PyPI (pinned, OpenStack 2026.1), configures and runs on 127.0.0.1:
  Keystone, Placement, Nova (API, conductor, scheduler, one nova-compute per fake hypervisor),
  Glance (file store), a Neutron API server (ML2, no agents), Cinder (fake volume driver, one
  back end per finite pool) and Heat (API + engine), against an existing MariaDB/MySQL and
  RabbitMQ.
It registers Climate in the Keystone catalog (type "reservation", service user "climate") and
can load Climate's out-of-tree scheduler filters into nova-scheduler and cinder-scheduler.

Usage: tools/cloud-harness.sh COMMAND [ARGS]   (or: python3 tools/cloud_harness COMMAND)
  up              install + configure + sync databases + start + bootstrap (idempotent;
                  services whose configuration changed are restarted)
  stop [SVC..]    stop every process this harness started (by the PIDs it recorded), or the
                  named ones
  restart [SVC..] stop and start again (all services, or the named ones)
  status          one line per process (state, RSS MiB); exit 1 when one is down
  purge           reset cloud state between tests: stacks, servers, volume snapshots, volumes,
                  volume types but __DEFAULT__, images but fake-image, floating IPs, routers,
                  networks but "public" (with their ports and subnets), server groups,
                  aggregates, extra flavors, trusts; in Placement, Climate's child providers
                  (climate-*) emptied of inventories and aggregates when nothing is allocated
                  on them (they are kept), and its CUSTOM_RESERVATION_* resource classes
  clean           stop, drop the databases (and climate_it, the integration tests' one) and
                  the RabbitMQ vhost, remove all state but the venv
  openrc [WHO]    shell exports for WHO = admin (default) | demo | alt | reader | climate
  env | json      ports, URLs, users and passwords, as KEY=VALUE lines or as JSON
  logs [SVC]      list the log files, or print the tail of one (LINES_SHOWN lines, 60)
  install | configure | dbsync | start   the single steps of "up"

Settings (environment; "up"/"configure" save them in $CLIMATE_CLOUD_DIR/settings.env, where
later commands find them unless the environment overrides them; "clean" forgets them):
  CLIMATE_CLOUD_DIR   state directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/climate-cloud)
  CLIMATE_CLOUD_VENV  virtualenv of the cloud (default $CLIMATE_CLOUD_DIR/venv)
  PYTHON              the Python (>= 3.11) that makes that venv (default python3)
  PORT_OFFSET         added to every service port (keystone = 5000 + PORT_OFFSET, ...); a
                      non-zero offset also gives its own default DB_PREFIX and RABBIT_VHOST,
                      so that a second cloud (own CLIMATE_CLOUD_DIR) can run beside the first
  CLIMATE_API_PORT    port of Climate's API in the catalog (default 1234 + PORT_OFFSET)
  SERVICES            default "keystone placement glance neutron nova cinder heat"
  COMPUTE_HOSTS       fake hypervisors, one nova-compute each
                      (default "compute1 compute2 compute3")
  FAKE_VCPUS FAKE_RAM_MB FAKE_DISK_GB   size of each fake hypervisor
  NOVA_FILTER_PATH    extra PYTHONPATH of nova-scheduler (where an out-of-tree filter lives)
  NOVA_EXTRA_FILTERS  comma-separated filter classes to make available and enable
                      (e.g. package.module.FilterClass)
  NOVA_ENABLED_FILTERS  Nova's own enabled filters (the extra ones are appended)
  CINDER_BACKENDS_GB  one fake Cinder back end (fake1, fake2, ...) per value: the size in GB of
                      its single pool, or "infinite" (default "100 200")
  CINDER_FILTER_PATH  extra PYTHONPATH of cinder-scheduler (a directory holding a filter module
                      and the .dist-info declaring its cinder.scheduler.filters entry point)
  CINDER_EXTRA_FILTERS  comma-separated filter class names appended to Cinder's
                      scheduler_default_filters (e.g. ClimateCinderFilter)
  HEAT_PLUGIN_DIRS    comma-separated directories of resource plugins heat-engine loads
                      (heat.conf plugin_dirs; e.g. climate/heat_plugin for OS::Climate::Lease)
  PUBLIC_CIDR         the external network "public" (flat, physnet "public"): its subnet
                      (default 203.0.113.0/24); Neutron's allocation pool is its first half
                      (.2 to .127), the rest is left for addresses registered to Climate
  VLAN_RANGES         Neutron's VLAN ranges (default physnet1:1000:1099)
  NOTIFY_DRIVER       oslo.messaging notification driver of Nova/Cinder (default noop)
  REGION              Keystone region (default RegionOne)
  DB_HOST DB_PORT DB_USER DB_PASSWORD DB_SOCKET DB_PREFIX (default cc_, or cc${PORT_OFFSET}_)
  RABBIT_HOST RABBIT_PORT RABBIT_USER RABBIT_PASSWORD RABBIT_VHOST (default climate_cloud[_OFFSET],
                      created with rabbitmqctl when possible, else the default vhost is used)
  ADMIN_PASSWORD SERVICE_PASSWORD DEMO_PASSWORD ALT_PASSWORD READER_PASSWORD
  WSGI_THREADS        threads of each API's gunicorn worker (default 4)
  START_TIMEOUT       seconds each wait may take (default 180)

Exit status: 0 on success. When a service fails to start, the harness names it, prints the
tail of its log and exits 1.
"""
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from cloud_harness import broker
from cloud_harness import configs
from cloud_harness import database
from cloud_harness import install as install_mod
from cloud_harness import pidfiles
from cloud_harness import processes
from cloud_harness import services as services_mod
from cloud_harness import settings as settings_mod
from cloud_harness.output import die
from cloud_harness.output import say
from cloud_harness.settings import IP

PROG = "tools/cloud-harness.sh"
HERE = os.path.dirname(os.path.abspath(__file__))
#: Where the package lives: the cloud's venv imports cloud_harness.cloud_api from there.
TOOLS = os.path.dirname(HERE)
#: The harness's fake drivers and where in the venv they go.
FAKE_DRIVERS = {"nova": ("fake_compute.py", services_mod.fake_compute_driver_file),
                "cinder": ("fake_volume.py", services_mod.fake_volume_driver_file)}
#: Commands that change the cloud: one at a time per cloud directory (a CI run starts the
#: cloud in the background, the integration tests' own "up" then waits for it).
LOCKED = {"up", "install", "configure", "dbsync", "start", "stop", "restart", "purge", "clean"}


# ---- configure

def configure(s):
    if not install_mod.has_venv(s):
        die(f"no venv at {s.venv}: run '{PROG} install' (or 'up') first")
    for d in (s.etc, s.logs, s.run):
        os.makedirs(d, exist_ok=True)
    broker.ensure_vhost(s)
    try:
        configs.write(s)
    except configs.ConfigError as e:
        die(str(e))
    for service, (source, destination) in FAKE_DRIVERS.items():
        if s.enabled(service):
            shutil.copy(os.path.join(HERE, source), destination(s.venv))
    with open(s.settings_file, "w") as f:
        f.write(s.saved_text())
    say(f"configure: files in {s.etc}")


# ---- start

def api_environment(s):
    """The CC_* variables cloud_api reads (identity's stamp digests them: same names and
    values as ever, so that a cloud is not bootstrapped again for nothing)."""
    return {
        "CC_RUN": s.run, "CC_LOGS": s.logs, "CC_AUTH_URL": s.auth_url, "CC_REGION": s["REGION"],
        "CC_IP": IP, "CC_SERVICES": s["SERVICES"], "CC_COMPUTE_HOSTS": s["COMPUTE_HOSTS"],
        "CC_START_TIMEOUT": s["START_TIMEOUT"],
        "CC_CINDER_BACKENDS": "".join(f"{name} " for name, _ in s.cinder_backends()),
        "CC_PUBLIC_CIDR": s["PUBLIC_CIDR"],
        "CC_ADMIN_PASSWORD": s["ADMIN_PASSWORD"], "CC_SERVICE_PASSWORD": s["SERVICE_PASSWORD"],
        "CC_DEMO_PASSWORD": s["DEMO_PASSWORD"], "CC_ALT_PASSWORD": s["ALT_PASSWORD"],
        "CC_READER_PASSWORD": s["READER_PASSWORD"],
        "CC_PLACEMENT_URL": s.url("placement"), "CC_NOVA_URL": s.url("nova"),
        "CC_GLANCE_URL": s.url("glance"), "CC_NEUTRON_URL": s.url("neutron"),
        "CC_CINDER_URL": s.url("cinder"),
        "CC_HEAT_URL": f"http://{IP}:{s.ports['heat']}/v1/%(project_id)s",
        "CC_CLIMATE_URL": s.climate_url,
        "CC_NOVA_MANAGE": "\t".join([f"{s.bin}/nova-manage", "--config-file",
                                     f"{s.etc}/nova/nova.conf"]),
    }


def cloud_api(s, *commands):
    """Run cloud_api's COMMANDS in the cloud's venv; its exit status."""
    env = dict(os.environ, **api_environment(s))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (TOOLS, os.environ.get("PYTHONPATH")) if p)
    # (run from the cloud's directory: "-m" puts the working directory on sys.path)
    return subprocess.run([f"{s.bin}/python", "-m", "cloud_harness.cloud_api", *commands],
                          env=env, cwd=s.cloud_dir, stdin=subprocess.DEVNULL).returncode


def start(s):
    started = time.monotonic()
    if not (os.path.exists(s.settings_file) and os.path.isdir(f"{s.etc}/wsgi")):
        die(f"not configured: run '{PROG} up'")
    os.makedirs(s.logs, exist_ok=True)
    os.makedirs(s.run, exist_ok=True)
    database.preflight(s)
    wanted = services_mod.define(s)
    by_name = {svc.name: svc for svc in wanted}
    if "keystone" in by_name:
        processes.ensure_running(s, [by_name["keystone"]])
        processes.wait_http(s, "keystone", s.auth_url)
        if cloud_api(s, "identity") != 0:
            die("keystone bootstrap failed")
        say(f"start: keystone ready after {time.monotonic() - started:.0f} s")
    processes.ensure_running(s, wanted)
    for svc in wanted:
        if svc.port:
            processes.wait_http(s, svc.name, f"http://{IP}:{svc.port}/")
    say(f"start: every API answers after {time.monotonic() - started:.0f} s")
    # flavors and image, then every service up and every hypervisor in Nova and Placement
    steps = ["resources"]
    if s.enabled("nova"):
        steps += ["wait-nova", "wait-hypervisors"]
    if s.enabled("cinder"):
        steps.append("wait-cinder")
    if s.enabled("heat"):
        steps.append("wait-heat")
    if cloud_api(s, *steps) != 0:
        raise SystemExit(1)
    for svc in wanted:
        if not pidfiles.alive(s.run, svc.name):
            pidfiles.service_failed(s.logs, svc.name, "is not running")
    say(f"start: all {len(wanted)} processes up in {time.monotonic() - started:.0f} s")


def up(s):
    started = time.monotonic()
    install_mod.install(s)
    configure(s)
    processes.check_ports(s, services_mod.define(s))
    database.dbsync(s)
    start(s)
    say(f"up: cloud ready in {time.monotonic() - started:.0f} s (auth {s.auth_url}; "
        f"'{PROG} openrc' for credentials)")


# ---- stop, status

def stop(s, names=()):
    if not os.path.isdir(s.run):
        say("stop: nothing runs")
        return
    processes.stop(s, names)
    say("stop: stopped" + (" " + " ".join(names) if names else ""))


def status(s):
    rows = processes.status_rows(s, services_mod.define(s))
    lines = ["%-22s %-8s %-6s %s" % ("SERVICE", "PID", "STATE", "RSS_MiB")]
    for name, pid, rss in rows:
        lines.append("%-22s %-8s %-6s %s" % ((name, pid, "up", rss) if pid
                                            else (name, "-", "DOWN", "-")))
    lines.append(f"total RSS: {sum(rss for _, pid, rss in rows if pid)} MiB")
    print("\n".join(lines))
    return 0 if all(pid for _, pid, _ in rows) else 1


# ---- information for people and for test fixtures

def credentials(s, who):
    try:
        return s.credentials(who)
    except KeyError:
        die(f"openrc: unknown user '{who}' (admin, demo, alt, reader, climate)")


def openrc_text(s, who="admin"):
    user, password, project = credentials(s, who)
    return f"""export OS_AUTH_URL={s.auth_url}
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME={user}
export OS_PASSWORD={password}
export OS_PROJECT_NAME={project}
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME={s['REGION']}
export OS_INTERFACE=public
export PATH={s.bin}:$PATH
"""


def db_url_parts(s):
    """(URL of the database server, what follows it in the URL of a database but the name's
    end): the test fixtures' db_url_prefix and db_url_query."""
    server, query = s.db_server()
    return server, s["DB_PREFIX"] + query


def env_pairs(s):
    """Everything a test fixture needs, as (KEY, VALUE) (prefix CLOUD_)."""
    pairs = [("CLOUD_DIR", s.cloud_dir), ("CLOUD_BIN", s.bin), ("CLOUD_AUTH_URL", s.auth_url),
             ("CLOUD_REGION", s["REGION"]), ("CLOUD_RABBIT_URL", s.rabbit_url()),
             ("CLOUD_DB_URL_PREFIX", db_url_parts(s)[0]), ("CLOUD_DB_PREFIX", s["DB_PREFIX"]),
             ("CLOUD_COMPUTE_HOSTS", s["COMPUTE_HOSTS"]), ("CLOUD_SERVICES", s["SERVICES"]),
             ("CLOUD_IMAGE", "fake-image"), ("CLOUD_FLAVORS", "m1.tiny m1.small m1.medium"),
             ("CLOUD_CLIMATE_API_PORT", str(s.climate_api_port)),
             ("CLOUD_CLIMATE_URL", s.climate_url), ("CLOUD_CLIMATE_DB", s.climate_db)]
    for name in ("keystone", "placement", "nova", "glance", "neutron", "cinder", "heat"):
        pairs.append((f"CLOUD_{name.upper()}_PORT", str(s.ports[name])))
    for knob in ("ADMIN_PASSWORD", "SERVICE_PASSWORD", "DEMO_PASSWORD", "ALT_PASSWORD",
                 "READER_PASSWORD"):
        pairs.append((f"CLOUD_{knob}", s[knob]))
    return pairs


def env_text(s):
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in env_pairs(s))


def description(s):
    """What "json" prints: the cloud for a test fixture."""
    prefix, query = db_url_parts(s)
    users = {}
    for who in settings_mod.USERS:
        user, password, project = s.credentials(who)
        users[who] = {"username": user, "password": password, "project_name": project,
                      "user_domain_name": "Default", "project_domain_name": "Default"}
    ports = {name: s.ports[name] for name in ("keystone", "placement", "nova", "glance",
                                               "neutron", "cinder", "heat")}
    return {
        "cloud_dir": s.cloud_dir,
        "bin": s.bin,
        "auth_url": s.auth_url,
        "region": s["REGION"],
        "rabbit_url": s.rabbit_url(),
        "db_url_prefix": prefix,
        "db_url_query": query,
        "db_prefix": s["DB_PREFIX"],
        "services": s.services,
        "compute_hosts": s.compute_hosts,
        "image": "fake-image",
        "flavors": ["m1.tiny", "m1.small", "m1.medium"],
        "ports": ports,
        "urls": {name: s.url(name) for name in ports},
        "climate": {"port": s.climate_api_port, "database": s.climate_db,
                    "url": s.climate_url, "service_type": "reservation"},
        "users": users,
    }


def logs(s, name=None):
    if name is None:
        try:
            found = sorted(f for f in os.listdir(s.logs) if f.endswith(".log"))
        except FileNotFoundError:
            found = []
        for f in found:
            print(os.path.join(s.logs, f))
        return
    path = os.path.join(s.logs, f"{name}.log")
    if not os.path.isfile(path):
        die(f"no log {path}")
    count = int(os.environ.get("LINES_SHOWN") or 60)
    with open(path, errors="replace") as f:
        sys.stdout.write("".join(f.readlines()[-count:]))


# ---- purge, clean

def purge(s):
    if not os.path.exists(s.settings_file):
        die(f"not configured: run '{PROG} up'")
    if not (s.enabled("keystone") and pidfiles.alive(s.run, "keystone")):
        die(f"the cloud is not running: run '{PROG} up'")
    return cloud_api(s, "purge")


def clean(s):
    stop(s)
    current = database.owner(s) if database.reachable(s) else None
    if current is None:
        say(f"WARNING: database server unreachable: databases {s['DB_PREFIX']}* and vhost "
            "not dropped")
    elif current and current != s.cloud_dir:
        say(f"WARNING: databases {s['DB_PREFIX']}* and vhost belong to the cloud in "
            f"{current}: not dropped")
    else:
        database.drop_all(s)
        broker.delete_vhost(s)
    for d in (s.etc, s.data, s.logs, s.run, s.lib):
        shutil.rmtree(d, ignore_errors=True)
    for f in (s.settings_file, broker.created_file(s)):
        if os.path.exists(f):
            os.remove(f)
    say(f"clean: state removed (venv kept: {s.venv})")


# ---- main

def hold_lock(s):
    """Hold the cloud directory's lock until this process exits (not passed to services:
    subprocess closes the descriptor in the children)."""
    os.makedirs(s.cloud_dir, exist_ok=True)
    fd = os.open(os.path.join(s.cloud_dir, ".lock"), os.O_WRONLY | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    command, args = (argv[0], argv[1:]) if argv else ("help", [])
    if command in ("help", "-h", "--help"):
        print(__doc__.rstrip())
        return 0
    os.umask(0o022)
    s = settings_mod.load()
    if command in LOCKED:
        hold_lock(s)
    simple = {
        "up": lambda: up(s),
        "install": lambda: install_mod.install(s),
        "configure": lambda: (install_mod.install_if_missing(s), configure(s)),
        "dbsync": lambda: database.dbsync(s),
        "start": lambda: start(s),
        "stop": lambda: stop(s, args),
        "restart": lambda: (stop(s, args), start(s)),
        "clean": lambda: clean(s),
        "openrc": lambda: sys.stdout.write(openrc_text(s, *args[:1])),
        "env": lambda: sys.stdout.write(env_text(s)),
        "json": lambda: print(json.dumps(description(s), indent=2, sort_keys=True)),
        "logs": lambda: logs(s, *args[:1]),
    }
    if command == "status":
        return status(s)
    if command == "purge":
        return purge(s)
    if command not in simple:
        die(f"unknown command '{command}' (try '{PROG} help')")
    simple[command]()
    return 0
