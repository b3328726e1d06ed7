"""install: one venv with every service, pinned by constraints.txt (OpenStack 2026.1)."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

from cloud_harness.output import die
from cloud_harness.output import say

HERE = os.path.dirname(os.path.abspath(__file__))
CONSTRAINTS = os.path.join(HERE, "constraints.txt")

#: What gets installed. python-openstackclient is only there for people poking at the cloud.
PACKAGES = ("keystone", "openstack-placement", "nova", "glance", "neutron", "cinder",
            "openstack-heat", "gunicorn", "pymysql", "python-openstackclient")

#: pip's stderr lines that are noise (local extra indexes that do not exist, yanked pins)
PIP_NOISE = ("is ignored: it is neither a file nor a directory", "yanked")

#: oslo.messaging 17.x polls for each RPC reply with time.sleep(0.5) (a workaround for
#: lp-2035113): every nova-compute -> conductor call costs 0.5 s, a fake boot ~6 s.
SLOW_POLL = "                time.sleep(0.5)"
FAST_POLL = "                time.sleep(0.01)  # cloud-harness (was 0.5)"


def stamp_of(constraints_text):
    """What the venv's stamp holds once it has these constraints and PACKAGES."""
    return hashlib.sha256((constraints_text + " ".join(PACKAGES) + "\n").encode()
                          ).hexdigest()[:16]


def patched_amqpdriver(text):
    """amqpdriver.py polling for replies every 10 ms (the text unchanged when it is)."""
    return re.sub(f"^{re.escape(SLOW_POLL)}$", FAST_POLL, text, flags=re.MULTILINE)


def venv_python(s):
    return os.path.join(s.bin, "python")


def has_venv(s):
    return os.access(venv_python(s), os.X_OK)


def install(s):
    python = s["PYTHON"]
    ok = subprocess.run([python, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
                        check=False, stderr=subprocess.DEVNULL)
    if ok.returncode != 0:
        die(f"{python} must be Python >= 3.11 (set PYTHON=...)")
    os.makedirs(s.cloud_dir, exist_ok=True)
    constraints = os.path.join(s.cloud_dir, "constraints.txt")
    shutil.copy(CONSTRAINTS, constraints)
    with open(CONSTRAINTS) as f:
        want = stamp_of(f.read())
    stamp = os.path.join(s.venv, ".climate-cloud-stamp")
    try:
        with open(stamp) as f:
            if f.read().strip() == want:
                say(f"install: venv up to date ({s.venv})")
                return
    except OSError:
        pass
    started = time.monotonic()
    if not has_venv(s):
        subprocess.run([python, "-m", "venv", s.venv], check=True)
    say(f"install: pip install into {s.venv} (a few minutes when cold)")
    pip = subprocess.Popen([os.path.join(s.bin, "pip"), "install", "-q",
                            "--disable-pip-version-check", "-c", constraints, *PACKAGES],
                           stderr=subprocess.PIPE, text=True)
    for line in pip.stderr:
        if not any(noise in line for noise in PIP_NOISE):
            sys.stderr.write(line)
    if pip.wait() != 0:
        die("pip install failed")
    patch_oslo_messaging(s)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    size = subprocess.run(["du", "-sh", s.venv], capture_output=True, text=True).stdout.split()
    say(f"install: done in {time.monotonic() - started:.0f} s, venv {size[0] if size else '?'}")


def install_if_missing(s):
    if not has_venv(s):
        install(s)


def patch_oslo_messaging(s):
    where = subprocess.run(
        [venv_python(s), "-c", "import oslo_messaging, os; "
         "print(os.path.dirname(oslo_messaging.__file__))"],
        capture_output=True, text=True, check=True).stdout.strip()
    path = os.path.join(where, "_drivers", "amqpdriver.py")
    with open(path) as f:
        text = f.read()
    patched = patched_amqpdriver(text)
    if patched != text:
        with open(path, "w") as f:
            f.write(patched)
