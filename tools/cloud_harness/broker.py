"""The cloud's RabbitMQ vhost: one of its own keeps its queues away from other users of the
broker. $CLIMATE_CLOUD_DIR/rabbit-vhost names the vhost the harness created (clean deletes it).
"""
import os
import shutil
import subprocess

from cloud_harness.output import say

#: Run in the cloud's venv (which has amqp): exit 0 when the vhost accepts the user.
PROBE = """import sys
import amqp
conn = amqp.Connection(sys.argv[1], userid=sys.argv[2], password=sys.argv[3],
                       virtual_host=sys.argv[4], connect_timeout=5)
conn.connect()
conn.close()
"""


def created_file(s):
    return os.path.join(s.cloud_dir, "rabbit-vhost")


def _ctl(*args):
    return subprocess.run(["rabbitmqctl", "-q", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def ensure_vhost(s):
    """Make RABBIT_VHOST usable; when it cannot be, fall back to the default vhost (the
    knob becomes empty, as settings.env then says)."""
    k = s.knobs
    vhost = k["RABBIT_VHOST"]
    if not vhost:
        return
    probe = subprocess.run([f"{s.bin}/python", "-", f"{k['RABBIT_HOST']}:{k['RABBIT_PORT']}",
                            k["RABBIT_USER"], k["RABBIT_PASSWORD"], vhost], input=PROBE,
                           text=True, capture_output=True)
    if probe.returncode == 0:
        return
    if shutil.which("rabbitmqctl"):
        listed = _ctl("list_vhosts")
        exists = listed.returncode == 0 and vhost in listed.stdout.splitlines()
        if (exists or _ctl("add_vhost", vhost).returncode == 0) and \
                _ctl("set_permissions", "-p", vhost, k["RABBIT_USER"], ".*", ".*", ".*"
                     ).returncode == 0:
            with open(created_file(s), "w") as f:
                f.write(vhost + "\n")
            say(f"configure: RabbitMQ vhost '{vhost}' ready")
            return
    say(f"WARNING: cannot create RabbitMQ vhost '{vhost}' (rabbitmqctl missing or not "
        "allowed); using the default vhost")
    k["RABBIT_VHOST"] = ""


def delete_vhost(s):
    """Delete the vhost the harness created, if it did."""
    try:
        with open(created_file(s)) as f:
            vhost = f.read().strip()
    except OSError:
        return
    if vhost and (not shutil.which("rabbitmqctl")
                  or _ctl("delete_vhost", vhost).returncode != 0):
        say(f"WARNING: vhost {vhost} not deleted")
