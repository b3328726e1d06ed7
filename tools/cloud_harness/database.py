"""The cloud's databases on MariaDB/MySQL (through the mysql client): ownership, creation,
schema sync, removal.

Databases DB_PREFIX* belong to one state directory: DB_PREFIX + "harness".owner says which,
so that a second cloud never migrates, bootstraps or drops the first one's databases.
"""
import concurrent.futures
import grp
import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import time

from cloud_harness.output import die
from cloud_harness.output import say


def client_args(s):
    k = s.knobs
    args = ["mysql", f"-u{k['DB_USER']}"]
    if k["DB_PASSWORD"]:
        args.append(f"-p{k['DB_PASSWORD']}")
    if k["DB_SOCKET"]:
        args += ["-S", k["DB_SOCKET"]]
    else:
        args += ["-h", k["DB_HOST"], "-P", k["DB_PORT"], "--protocol=tcp"]
    return args


def sql(s, statement, *options, check=True):
    """Run STATEMENT with the mysql client; its stdout, or None when it failed (check=False)."""
    done = subprocess.run(client_args(s) + list(options) + ["-e", statement],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        if check:
            die(f"SQL failed: {statement.splitlines()[0]}: {done.stderr.strip()}")
        return None
    return done.stdout


def quote_name(name):
    return "`" + name.replace("`", "``") + "`"


def quote_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def reachable(s):
    return sql(s, "SELECT 1", check=False) is not None


def preflight(s):
    if shutil.which("mysql") is None:
        die("the mysql/mariadb client is required")
    if not reachable(s):
        where = s["DB_SOCKET"] or f"{s['DB_HOST']}:{s['DB_PORT']}"
        die(f"cannot reach MariaDB/MySQL as {s['DB_USER']} at {where} (DB_* settings)")
    try:
        socket.create_connection((s["RABBIT_HOST"], int(s["RABBIT_PORT"])), timeout=5).close()
    except OSError:
        die(f"cannot reach RabbitMQ at {s['RABBIT_HOST']}:{s['RABBIT_PORT']} (RABBIT_* settings)")


def owner_db(s):
    return f"{s['DB_PREFIX']}harness"


def owner(s):
    """The state directory that owns databases DB_PREFIX*, or '' when none does."""
    out = sql(s, f"SELECT dir FROM {quote_name(owner_db(s))}.owner", "-N", check=False)
    return (out or "").strip()


def claim(s):
    current = owner(s)
    if current and current != s.cloud_dir:
        die(f"databases {s['DB_PREFIX']}* belong to the cloud in {current}: give this one "
            f"another PORT_OFFSET (or DB_PREFIX), or clean that one")
    if not current:
        db = quote_name(owner_db(s))
        sql(s, f"CREATE DATABASE IF NOT EXISTS {db}; "
               f"CREATE TABLE IF NOT EXISTS {db}.owner (dir VARCHAR(1024)); "
               f"DELETE FROM {db}.owner; "
               f"INSERT INTO {db}.owner VALUES ({quote_string(s.cloud_dir)})")


def all_exist(s):
    return all(sql(s, f"USE {quote_name(s['DB_PREFIX'] + d)}", check=False) is not None
               for d in s.databases())


#: The services' packages whose version changes their schemas.
SCHEMA_PACKAGES = ("nova", "keystone", "openstack-placement", "glance", "neutron", "cinder",
                   "openstack-heat")


def schema_fingerprint(s, freeze):
    """Digest of what the schemas depend on: databases, their server, the bootstrap, and
    the versions in FREEZE (pip freeze's output) of the services' packages."""
    versions = [line for line in freeze.splitlines()
                if line.partition("==")[1] and line.partition("==")[0].lower() in SCHEMA_PACKAGES]
    text = (" ".join(s.databases()) + "\n" + s.db_url("x") + "\n"
            + f"{s.auth_url} {s['ADMIN_PASSWORD']} {s['REGION']}\n"
            + "".join(f"{v}\n" for v in versions))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sync_steps(s, service):
    """The commands that give SERVICE its schema, in order: (argv, condition) where a
    condition is None or a callable deciding, when its turn comes, whether argv runs."""
    b, etc = s.bin, s.etc
    if service == "keystone":
        km = [f"{b}/keystone-manage", "--config-file", f"{etc}/keystone/keystone.conf"]
        user, group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
        no_keys = lambda: not os.path.exists(f"{etc}/keystone/fernet-keys/0")  # noqa: E731
        return [(km + ["db_sync"], None),
                (km + ["fernet_setup", "--keystone-user", user, "--keystone-group", group],
                 no_keys),
                (km + ["credential_setup", "--keystone-user", user, "--keystone-group", group],
                 no_keys),
                (km + ["bootstrap", "--bootstrap-password", s["ADMIN_PASSWORD"],
                       "--bootstrap-region-id", s["REGION"],
                       "--bootstrap-admin-url", s.auth_url,
                       "--bootstrap-internal-url", s.auth_url,
                       "--bootstrap-public-url", s.auth_url], None)]
    if service == "placement":
        return [([f"{b}/placement-manage", "--config-file", f"{etc}/placement/placement.conf",
                  "db", "sync"], None)]
    if service == "glance":
        return [([f"{b}/glance-manage", "--config-file", f"{etc}/glance/glance-api.conf",
                  "db_sync"], None)]
    if service == "neutron":
        return [([f"{b}/neutron-db-manage", "--config-file", f"{etc}/neutron/neutron.conf",
                  "--config-file", f"{etc}/neutron/ml2_conf.ini", "upgrade", "heads"], None)]
    if service == "nova":
        nm = [f"{b}/nova-manage", "--config-file", f"{etc}/nova/nova.conf"]
        no_cell1 = lambda: " cell1 " not in subprocess.run(  # noqa: E731
            nm + ["cell_v2", "list_cells"], capture_output=True, text=True,
            stdin=subprocess.DEVNULL).stdout
        return [(nm + ["api_db", "sync"], None),
                (nm + ["cell_v2", "map_cell0", "--database_connection",
                       s.db_url("nova_cell0")], None),
                (nm + ["cell_v2", "create_cell", "--name", "cell1"], no_cell1),
                (nm + ["db", "sync"], None)]
    if service == "cinder":
        return [([f"{b}/cinder-manage", "--config-file", f"{etc}/cinder/cinder.conf",
                  "db", "sync"], None)]
    if service == "heat":
        return [([f"{b}/heat-manage", "--config-file", f"{etc}/heat/heat.conf", "db_sync"],
                 None)]
    raise ValueError(service)


def run_steps(steps, log_path):
    """Run STEPS in order, output to LOG_PATH; False at the first that fails."""
    with open(log_path, "a") as log:
        for argv, condition in steps:
            if condition is not None and not condition():
                continue
            if subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL).returncode != 0:
                return False
    return True


def dbsync(s):
    """Create the databases and their schemas, the services side by side (skipped when
    nothing they depend on changed)."""
    started = time.monotonic()
    os.makedirs(s.logs, exist_ok=True)
    os.makedirs(s.run, exist_ok=True)
    if not os.path.exists(s.settings_file):
        die("not configured: run 'cloud-harness.sh up'")
    preflight(s)
    claim(s)
    freeze = subprocess.run([f"{s.bin}/pip", "freeze"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL).stdout
    fingerprint = schema_fingerprint(s, freeze)
    done_file = os.path.join(s.run, "dbsync.done")
    try:
        with open(done_file) as f:
            done = f.read().strip()
    except OSError:
        done = None
    if done == fingerprint and all_exist(s):
        say("dbsync: schemas up to date")
        return
    say(f"dbsync: creating schemas (logs: {s.logs}/dbsync-*.log)")
    for d in s.databases():
        if sql(s, f"CREATE DATABASE IF NOT EXISTS {quote_name(s['DB_PREFIX'] + d)} "
                  "CHARACTER SET utf8mb4", check=False) is None:
            die(f"cannot create database {s['DB_PREFIX']}{d}")
    with concurrent.futures.ThreadPoolExecutor(max(1, len(s.services))) as pool:
        jobs = {service: pool.submit(run_steps, sync_steps(s, service),
                                     os.path.join(s.logs, f"dbsync-{service}.log"))
                for service in s.services}
    failed = [service for service, job in jobs.items() if not job.result()]
    if failed:
        for service in failed:
            path = os.path.join(s.logs, f"dbsync-{service}.log")
            with open(path, errors="replace") as f:
                tail = f.readlines()[-30:]
            say(f"--- last 30 lines of {path} ---\n" + "".join(tail))
        die("schema sync failed for: " + " ".join(failed))
    with open(done_file, "w") as f:
        f.write(fingerprint + "\n")
    say(f"dbsync: done in {time.monotonic() - started:.0f} s")


def drop_all(s):
    """Drop the cloud's databases, Climate's integration database and the owner's."""
    for name in [s["DB_PREFIX"] + d for d in s.databases()] + [s.climate_db, owner_db(s)]:
        sql(s, f"DROP DATABASE IF EXISTS {quote_name(name)}", check=False)
