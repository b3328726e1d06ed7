"""The harness's settings: environment first, then settings.env, then defaults.

Standard library only (the harness runs on the system python3).
"""
import os

#: Knobs saved by "configure" in settings.env (this order) and reloaded by later commands.
KNOBS = (
    "PYTHON", "CLIMATE_CLOUD_VENV", "PORT_OFFSET", "CLIMATE_API_PORT", "SERVICES",
    "COMPUTE_HOSTS", "FAKE_VCPUS", "FAKE_RAM_MB", "FAKE_DISK_GB", "NOVA_FILTER_PATH",
    "NOVA_EXTRA_FILTERS", "NOVA_ENABLED_FILTERS", "NOTIFY_DRIVER", "CINDER_BACKENDS_GB",
    "CINDER_FILTER_PATH", "CINDER_EXTRA_FILTERS", "HEAT_PLUGIN_DIRS", "PUBLIC_CIDR",
    "VLAN_RANGES", "REGION", "DB_HOST", "DB_PORT", "DB_USER", "DB_PASSWORD", "DB_SOCKET",
    "DB_PREFIX", "RABBIT_HOST", "RABBIT_PORT", "RABBIT_USER", "RABBIT_PASSWORD",
    "RABBIT_VHOST", "ADMIN_PASSWORD", "SERVICE_PASSWORD", "DEMO_PASSWORD", "ALT_PASSWORD",
    "READER_PASSWORD", "WSGI_THREADS", "START_TIMEOUT",
)

ALL_SERVICES = ("keystone", "placement", "glance", "neutron", "nova", "cinder", "heat")

# AvailabilityZoneFilter is gone from Nova 33: never list it.
NOVA_FILTERS = ("ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,"
                "ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,"
                "AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,"
                "SameHostFilter,DifferentHostFilter")

#: Defaults that do not depend on other knobs (an empty value counts as unset).
DEFAULTS = {
    "PYTHON": "python3",
    "PORT_OFFSET": "0",
    "SERVICES": " ".join(ALL_SERVICES),
    "COMPUTE_HOSTS": "compute1 compute2 compute3",
    "FAKE_VCPUS": "32",
    "FAKE_RAM_MB": "131072",
    "FAKE_DISK_GB": "2048",
    "NOVA_FILTER_PATH": "",
    "NOVA_EXTRA_FILTERS": "",
    "NOVA_ENABLED_FILTERS": NOVA_FILTERS,
    "NOTIFY_DRIVER": "noop",
    "CINDER_BACKENDS_GB": "100 200",
    "CINDER_FILTER_PATH": "",
    "CINDER_EXTRA_FILTERS": "",
    "HEAT_PLUGIN_DIRS": "",
    "PUBLIC_CIDR": "203.0.113.0/24",
    "VLAN_RANGES": "physnet1:1000:1099",
    "REGION": "RegionOne",
    "DB_HOST": "127.0.0.1",
    "DB_PORT": "3306",
    "DB_USER": "root",
    "DB_PASSWORD": "",
    "DB_SOCKET": "",
    "RABBIT_HOST": "127.0.0.1",
    "RABBIT_PORT": "5672",
    "RABBIT_USER": "guest",
    "RABBIT_PASSWORD": "guest",
    "ADMIN_PASSWORD": "admin",
    "SERVICE_PASSWORD": "service",
    "DEMO_PASSWORD": "demo",
    "ALT_PASSWORD": "alt",
    "READER_PASSWORD": "reader",
    "WSGI_THREADS": "4",
    "START_TIMEOUT": "180",
}

#: Knobs whose empty value is a value (no vhost: the broker's default one).
EMPTY_IS_A_VALUE = {"RABBIT_VHOST"}

#: Base port of each API (PORT_OFFSET is added).
BASE_PORTS = {"keystone": 5000, "placement": 8778, "nova": 8774, "glance": 9292,
              "neutron": 9696, "cinder": 8776, "heat": 8004}

IP = "127.0.0.1"

#: Who "openrc WHO" and "json" know: username, password knob, project.
USERS = {"admin": ("admin", "ADMIN_PASSWORD", "admin"),
         "demo": ("demo", "DEMO_PASSWORD", "demo"),
         "alt": ("alt", "ALT_PASSWORD", "alt"),
         "reader": ("reader", "READER_PASSWORD", "demo"),
         "climate": ("climate", "SERVICE_PASSWORD", "service")}


def default_cloud_dir(environ):
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(environ.get("HOME", "~"), ".cache")
    return os.path.join(cache, "climate-cloud")


def parse_saved(text):
    """settings.env's KEY=VALUE lines (values unquoted, up to the end of the line)."""
    saved = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in KNOBS:
            saved[key] = value
    return saved


def resolve(environ, saved, cloud_dir):
    """Every knob's value: the environment's (even empty), else the saved one, else the
    default; an empty value then means the default, but for RABBIT_VHOST."""
    values = {}
    for key in KNOBS:
        values[key] = environ[key] if key in environ else saved.get(key)
    for key, default in DEFAULTS.items():
        if not values[key]:
            values[key] = default
    offset = int(values["PORT_OFFSET"])
    instance = "" if offset == 0 else str(offset)
    if not values["CLIMATE_CLOUD_VENV"]:
        values["CLIMATE_CLOUD_VENV"] = os.path.join(cloud_dir, "venv")
    if not values["CLIMATE_API_PORT"]:
        values["CLIMATE_API_PORT"] = str(1234 + offset)
    if not values["DB_PREFIX"]:
        values["DB_PREFIX"] = f"cc{instance}_"
    if values["RABBIT_VHOST"] is None:
        values["RABBIT_VHOST"] = "climate_cloud" + (f"_{instance}" if instance else "")
    return Settings(cloud_dir, values, instance)


def load(environ=None):
    """The settings of the cloud of $CLIMATE_CLOUD_DIR, as the harness's commands see them."""
    environ = os.environ if environ is None else environ
    cloud_dir = environ.get("CLIMATE_CLOUD_DIR") or default_cloud_dir(environ)
    try:
        with open(os.path.join(cloud_dir, "settings.env")) as f:
            saved = parse_saved(f.read())
    except FileNotFoundError:
        saved = {}
    return resolve(environ, saved, cloud_dir)


class Settings:
    """Resolved knobs (``s.knobs``) and what follows from them: paths, ports, URLs."""

    def __init__(self, cloud_dir, knobs, instance):
        self.cloud_dir = cloud_dir
        self.knobs = knobs
        self.instance = instance
        self.venv = knobs["CLIMATE_CLOUD_VENV"]
        self.bin = os.path.join(self.venv, "bin")
        self.etc = os.path.join(cloud_dir, "etc")
        self.data = os.path.join(cloud_dir, "data")
        self.logs = os.path.join(cloud_dir, "log")
        self.run = os.path.join(cloud_dir, "run")
        self.lib = os.path.join(cloud_dir, "lib")
        self.settings_file = os.path.join(cloud_dir, "settings.env")
        self.offset = int(knobs["PORT_OFFSET"])
        self.ports = {name: base + self.offset for name, base in BASE_PORTS.items()}
        self.auth_url = f"http://{IP}:{self.ports['keystone']}/v3"
        self.services = knobs["SERVICES"].split()
        self.compute_hosts = knobs["COMPUTE_HOSTS"].split()
        self.climate_api_port = int(knobs["CLIMATE_API_PORT"])
        self.climate_url = f"http://{IP}:{self.climate_api_port}/v1"
        self.climate_db = "climate_it" + (f"_{instance}" if instance else "")
        self.start_timeout = float(knobs["START_TIMEOUT"])

    def __getitem__(self, key):
        return self.knobs[key]

    def enabled(self, service):
        return service in self.services

    def saved_text(self):
        """settings.env as "configure" writes it."""
        return "".join(f"{k}={self.knobs[k]}\n" for k in KNOBS)

    def url(self, service):
        paths = {"nova": "/v2.1", "cinder": "/v3", "keystone": "/v3"}
        return f"http://{IP}:{self.ports[service]}{paths.get(service, '')}"

    def db_server(self):
        """(URL of the database server up to a database's name, query after the name)."""
        k = self.knobs
        cred = k["DB_USER"] + (f":{k['DB_PASSWORD']}" if k["DB_PASSWORD"] else "")
        if k["DB_SOCKET"]:
            return (f"mysql+pymysql://{cred}@localhost/",
                    f"?unix_socket={k['DB_SOCKET']}&charset=utf8")
        return f"mysql+pymysql://{cred}@{k['DB_HOST']}:{k['DB_PORT']}/", "?charset=utf8"

    def db_url(self, name):
        """SQLAlchemy URL of database DB_PREFIX + name."""
        server, query = self.db_server()
        return f"{server}{self.knobs['DB_PREFIX']}{name}{query}"

    def rabbit_url(self):
        k = self.knobs
        return (f"rabbit://{k['RABBIT_USER']}:{k['RABBIT_PASSWORD']}@{k['RABBIT_HOST']}:"
                f"{k['RABBIT_PORT']}/{k['RABBIT_VHOST']}")

    def databases(self):
        """The databases of the enabled services (without DB_PREFIX)."""
        per_service = {"keystone": ["keystone"], "placement": ["placement"],
                       "glance": ["glance"], "neutron": ["neutron"],
                       "nova": ["nova_api", "nova", "nova_cell0"], "cinder": ["cinder"],
                       "heat": ["heat"]}
        return [db for s in ALL_SERVICES if self.enabled(s) for db in per_service[s]]

    def cinder_backends(self):
        """fake1, fake2, ...: one per value of CINDER_BACKENDS_GB, with its size."""
        return [(f"fake{i}", gb)
                for i, gb in enumerate(self.knobs["CINDER_BACKENDS_GB"].split(), 1)]

    def credentials(self, who):
        """(username, password, project) of one of the harness's users, or KeyError."""
        user, password_knob, project = USERS[who]
        return user, self.knobs[password_knob], project
