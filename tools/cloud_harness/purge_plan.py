"""What the cloud keeps and what purge removes, decided from the services' listings.

Pure functions of the JSON the APIs return (standard library only): cloud_api calls the
APIs and does what these say.
"""
import datetime
import ipaddress

#: The flavors "up" makes: name -> (RAM MB, vCPUs, disk GB).
BASE_FLAVORS = {"m1.tiny": (512, 1, 1), "m1.small": (2048, 1, 20), "m1.medium": (4096, 2, 40)}
IMAGE = "fake-image"
#: The external network floating IPs come from (flat, physical network "public").
PUBLIC_NET = "public"
DEFAULT_TYPE = "__DEFAULT__"
CLIMATE_CHILD_PREFIX = "climate-"       # Climate's child providers under compute nodes
CLIMATE_CLASS_PREFIX = "CUSTOM_RESERVATION_"  # Climate's per-reservation resource classes


def missing_flavors(flavors):
    """The base flavors (name, (ram, vcpus, disk)) not among FLAVORS."""
    have = {f["name"] for f in flavors}
    return [(name, size) for name, size in BASE_FLAVORS.items() if name not in have]


def extra_flavors(flavors):
    return [f for f in flavors if f["name"] not in BASE_FLAVORS]


def extra_images(images):
    return [i for i in images if i["name"] != IMAGE]


def extra_volume_types(types):
    return [t for t in types if t["name"] != DEFAULT_TYPE]


def extra_networks(networks):
    return [n for n in networks if n["name"] != PUBLIC_NET]


def router_interfaces(ports):
    return [p for p in ports if p["device_owner"] == "network:router_interface"]


def public_subnet(cidr):
    """(gateway, pool start, pool end) of the public subnet: Neutron allocates from the first
    half of CIDR's hosts (after the gateway), the second half is for addresses registered to
    Climate."""
    hosts = list(ipaddress.ip_network(cidr).hosts())
    half = len(hosts) // 2
    return str(hosts[0]), str(hosts[1]), str(hosts[half - 1])


def climate_children(providers):
    """Climate's child providers (climate-<host> under a compute node)."""
    return [rp for rp in providers
            if rp["name"].startswith(CLIMATE_CHILD_PREFIX) and rp.get("parent_provider_uuid")]


def emptying(inventories, aggregates):
    """What to clear on a Climate child no allocation holds: (inventories?, aggregates?)."""
    return bool(inventories), bool(aggregates)


def reservation_classes(classes):
    return [rc["name"] for rc in classes if rc["name"].startswith(CLIMATE_CLASS_PREFIX)]


def fresh(service, since):
    """Whether an os-services entry is up by its own heartbeat since SINCE (seconds since the
    epoch, when its process started): "up" alone stays true for 60 s after a process stops
    reporting (stopped, restarted, or cut from RabbitMQ)."""
    if service["state"] != "up" or not service.get("updated_at") or since is None:
        return False
    beat = datetime.datetime.fromisoformat(service["updated_at"].rstrip("Z")).replace(tzinfo=None)
    start = datetime.datetime.fromtimestamp(since, datetime.timezone.utc).replace(tzinfo=None)
    return beat >= start - datetime.timedelta(seconds=1)


#: The order the summary names what was purged in (its branches run side by side).
SUMMARY_ORDER = ("stacks", "servers", "snapshots", "volumes", "volume_types", "images",
                 "server_groups", "aggregates", "flavors", "floating_ips", "routers",
                 "networks", "climate_providers_emptied", "climate_providers_left",
                 "climate_resource_classes", "trusts")


def summary(counts):
    def rank(item):
        name = item[0]
        return (SUMMARY_ORDER.index(name) if name in SUMMARY_ORDER else len(SUMMARY_ORDER),
                name)
    return "purged " + " ".join(f"{k}={v}" for k, v in sorted(counts.items(), key=rank))
