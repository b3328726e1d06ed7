"""The harness's calls to the cloud's APIs, run in the cloud's venv (keystoneauth1):
``python -m cloud_harness.cloud_api COMMAND...``.

Commands: identity, resources, wait-nova, wait-hypervisors, wait-cinder, wait-heat, purge.
Settings come from CC_* variables (cli.api_environment); what to keep and what to remove
from purge_plan.
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import time

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from cloud_harness import pidfiles
from cloud_harness import purge_plan as plan

E = os.environ
AUTH_URL = E["CC_AUTH_URL"]
REGION = E["CC_REGION"]
SERVICES = E["CC_SERVICES"].split()
HOSTS = E["CC_COMPUTE_HOSTS"].split()
TIMEOUT = float(E.get("CC_START_TIMEOUT", "180"))
RUN, LOGS = E["CC_RUN"], E["CC_LOGS"]
NOVA_MICROVERSION = "2.60"


class Failed(Exception):
    """A service did not come up: message already names it."""


def session(user="admin", password=None, project="admin", domain="default", timeout=None):
    auth = v3.Password(auth_url=AUTH_URL, username=user, user_domain_id=domain,
                       password=password or E["CC_ADMIN_PASSWORD"],
                       project_name=project, project_domain_id="default")
    return ks_session.Session(auth=auth, timeout=timeout)


def api(sess, service_type, **kw):
    return adapter.Adapter(sess, service_type=service_type, interface="public",
                           region_name=REGION, **kw)


def nova(sess):
    return api(sess, "compute", default_microversion=NOVA_MICROVERSION)


def wait(what, ready, processes, timeout=TIMEOUT):
    """Poll ready() until true; fail at once when one of processes died, or at the timeout.

    ready() returns True, or a false value / a string saying what is still missing.
    """
    deadline = time.monotonic() + timeout
    missing = "no answer yet"
    while True:
        try:
            result = ready()
            if result is True:
                return
            missing = result or missing
        except (ks_exc.ClientException, OSError) as e:
            missing = f"{type(e).__name__}: {e}"
        for name in processes:
            if not pidfiles.alive(RUN, name):
                pidfiles.service_failed(LOGS, name, f"exited while waiting for {what}")
        if time.monotonic() > deadline:
            culprits = [p for p in processes if p in str(missing)] or processes
            sys.stderr.write(f"cloud-harness: SERVICE FAILED: {', '.join(culprits)}: "
                             f"{what} not ready within {timeout:.0f} s ({missing})\n")
            for name in culprits:
                sys.stderr.write(pidfiles.log_tail(LOGS, name, 25))
            raise SystemExit(1)
        time.sleep(0.5)


# ---- identity: projects, users, roles, catalog (idempotent)

class Identity:
    def __init__(self):
        self.ks = api(session(), "identity")

    def find(self, collection, **query):
        items = self.ks.get(f"/{collection}", params=query).json()[collection]
        return items[0] if items else None

    def ensure(self, collection, body, **query):
        found = self.find(collection, **query)
        if found:
            return found
        kind = collection[:-1]
        return self.ks.post(f"/{collection}", json={kind: body}).json()[kind]

    def project(self, name):
        return self.ensure("projects", {"name": name, "domain_id": "default"},
                           name=name, domain_id="default")

    def role(self, name):
        return self.ensure("roles", {"name": name}, name=name)

    def user(self, name, password, project=None, domain="default"):
        user = self.find("users", name=name, domain_id=domain)
        if user is None:
            body = {"name": name, "password": password, "domain_id": domain}
            if project:
                body["default_project_id"] = project["id"]
            return self.ks.post("/users", json={"user": body}).json()["user"]
        try:  # keep the password in line with the settings, without revoking needlessly
            v3.Password(auth_url=AUTH_URL, username=name, user_domain_id=domain,
                        password=password).get_auth_ref(ks_session.Session())
        except ks_exc.Unauthorized:
            self.ks.patch(f"/users/{user['id']}", json={"user": {"password": password}})
        return user

    def grant(self, role, user, project=None, domain=None):
        target = f"/projects/{project['id']}" if project else f"/domains/{domain['id']}"
        self.ks.put(f"{target}/users/{user['id']}/roles/{role['id']}")

    def service(self, name, stype, url):
        svc = next((s for s in self.ks.get("/services", params={"type": stype}).json()["services"]
                    if s["name"] == name), None)
        if svc is None:
            svc = self.ks.post("/services", json={"service": {"name": name, "type": stype}}
                               ).json()["service"]
        endpoints = self.ks.get("/endpoints", params={"service_id": svc["id"]}).json()["endpoints"]
        for interface in ("public", "internal", "admin"):
            mine = [e for e in endpoints if e["interface"] == interface
                    and e.get("region_id") == REGION]
            if [e["url"] for e in mine] == [url]:
                continue
            for e in mine:
                self.ks.delete(f"/endpoints/{e['id']}")
            self.ks.post("/endpoints", json={"endpoint": {
                "service_id": svc["id"], "interface": interface, "url": url,
                "region_id": REGION}})


def identity():
    inputs = json.dumps({k: v for k, v in sorted(E.items()) if k.startswith("CC_")})
    digest = hashlib.sha256(inputs.encode()).hexdigest()
    stamp = f"{RUN}/identity.done"
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    idn = Identity()
    roles = {r: idn.role(r) for r in ("admin", "member", "reader", "service",
                                      "heat_stack_owner", "heat_stack_user")}
    service = idn.project("service")
    catalog = [("placement", "placement", E["CC_PLACEMENT_URL"]),
               ("nova", "compute", E["CC_NOVA_URL"]),
               ("glance", "image", E["CC_GLANCE_URL"]),
               ("neutron", "network", E["CC_NEUTRON_URL"]),
               ("cinder", "block-storage", E["CC_CINDER_URL"]),
               ("heat", "orchestration", E["CC_HEAT_URL"])]
    catalog = [c for c in catalog if c[0] in SERVICES]
    catalog.append(("climate", "reservation", E["CC_CLIMATE_URL"]))
    demo, alt = idn.project("demo"), idn.project("alt")

    def service_entry(name, stype, url):
        user = idn.user(name, E["CC_SERVICE_PASSWORD"], service)
        for r in ("admin", "service"):
            idn.grant(roles[r], user, service)
        idn.service(name, stype, url)

    def person(name, password, project, role):
        idn.grant(roles[role], idn.user(name, password, project), project)

    def heat_domain():
        domain = idn.ensure("domains", {"name": "heat", "description": "Heat stack users"},
                            name="heat")
        hda = idn.user("heat_domain_admin", E["CC_SERVICE_PASSWORD"], domain=domain["id"])
        idn.grant(roles["admin"], hda, domain=domain)

    jobs = [(service_entry, entry) for entry in catalog]
    jobs += [(person, ("demo", E["CC_DEMO_PASSWORD"], demo, "member")),
             (person, ("alt", E["CC_ALT_PASSWORD"], alt, "member")),
             (person, ("reader", E["CC_READER_PASSWORD"], demo, "reader"))]
    if "heat" in SERVICES:
        jobs.append((heat_domain, ()))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # keystone serves 4 threads
        for future in [pool.submit(fn, *args) for fn, args in jobs]:
            future.result()
    with open(stamp, "w") as f:
        f.write(digest)


# ---- flavors and image

def public_network(sess):
    """The external network and its subnet: Neutron's allocation pool is the first half of
    CC_PUBLIC_CIDR, the second half is for addresses registered to Climate."""
    net_api = api(sess, "network")

    def listed():
        found = net_api.get("/v2.0/networks",
                            params={"name": plan.PUBLIC_NET}).json()["networks"]
        return found[0] if found else None

    net = listed()
    if net is None:
        made = net_api.post("/v2.0/networks", raise_exc=False, json={"network": {
            "name": plan.PUBLIC_NET, "router:external": True, "shared": False,
            "provider:network_type": "flat", "provider:physical_network": plan.PUBLIC_NET}})
        if made.status_code == 409:
            # the flat physical network is taken: the network exists, and a listing made
            # while a restarted neutron-server was still starting missed it (seen once)
            seen = {}

            def listed_now():
                seen["net"] = listed()
                return seen["net"] is not None or "not listed yet"
            wait("the public network listed", listed_now, ["neutron"], timeout=60)
            net = seen["net"]
        elif made.status_code >= 400:
            raise ks_exc.from_response(made, "POST", "/v2.0/networks")
        else:
            net = made.json()["network"]
    if not net_api.get("/v2.0/subnets", params={"network_id": net["id"]}).json()["subnets"]:
        cidr = E.get("CC_PUBLIC_CIDR", "203.0.113.0/24")
        gateway, start, end = plan.public_subnet(cidr)
        net_api.post("/v2.0/subnets", json={"subnet": {
            "name": plan.PUBLIC_NET + "-subnet", "network_id": net["id"], "ip_version": 4,
            "cidr": cidr, "gateway_ip": gateway, "enable_dhcp": False,
            "allocation_pools": [{"start": start, "end": end}]}})


def resources():
    sess = session()
    if "neutron" in SERVICES:
        public_network(sess)
    if "nova" in SERVICES:
        compute = nova(sess)
        flavors = compute.get("/flavors", params={"is_public": "None"}).json()["flavors"]
        for name, (ram, vcpus, disk) in plan.missing_flavors(flavors):
            compute.post("/flavors", json={"flavor": {
                "name": name, "ram": ram, "vcpus": vcpus, "disk": disk,
                "os-flavor-access:is_public": True}})
    if "glance" in SERVICES:
        image = api(sess, "image")
        found = image.get("/v2/images", params={"name": plan.IMAGE}).json()["images"]
        if any(i["status"] == "active" for i in found):
            return
        for i in found:  # a half-made image from an interrupted run
            image.delete(f"/v2/images/{i['id']}", raise_exc=False)
        img = image.post("/v2/images", json={
            "name": plan.IMAGE, "disk_format": "raw", "container_format": "bare",
            "visibility": "public"}).json()
        image.put(f"/v2/images/{img['id']}/file", data=b"\0" * 65536,
                  headers={"Content-Type": "application/octet-stream"})
        wait("image upload", lambda: image.get(f"/v2/images/{img['id']}").json()["status"]
             == "active" or "image not active", ["glance"])


# ---- waits

def fresh(service, process):
    """Up by its own heartbeat since PROCESS (a harness name) started."""
    return plan.fresh(service, pidfiles.started_at(RUN, process))


def wait_nova():
    compute = nova(session(timeout=15))
    wanted = {("nova-conductor", None), ("nova-scheduler", None)}
    wanted |= {("nova-compute", h) for h in HOSTS}

    def ready():
        def process(s):
            return f"{s['binary']}-{s['host']}" if s["binary"] == "nova-compute" else s["binary"]
        up = {(s["binary"], s["host"]) for s in compute.get("/os-services").json()["services"]
              if fresh(s, process(s))}
        up |= {(b, None) for b, _ in up}
        missing = sorted(f"{b}-{h}" if h else b for b, h in wanted - up)
        return True if not missing else "not up: " + " ".join(missing)
    wait("nova services", ready,
         ["nova-conductor", "nova-scheduler"] + [f"nova-compute-{h}" for h in HOSTS])


def wait_hypervisors():
    sess = session(timeout=15)
    compute, placement = nova(sess), api(sess, "placement")
    # nova-scheduler maps new computes to cell1 by itself, but its periodic tasks may first
    # wait 40 s or more: map them at once (idempotent), and again if they are slow to appear
    discovered = [None]

    def discover():
        with open(f"{LOGS}/nova-manage.log", "ab") as log:
            subprocess.run(E["CC_NOVA_MANAGE"].split("\t") + ["cell_v2", "discover_hosts"],
                           stdout=log, stderr=subprocess.STDOUT, timeout=120, check=False)
        discovered[0] = time.monotonic()

    def ready():
        hvs = {h["hypervisor_hostname"]
               for h in compute.get("/os-hypervisors").json()["hypervisors"]}
        rps = {r["name"] for r in placement.get("/resource_providers").json()["resource_providers"]}
        missing = sorted(h for h in HOSTS if h not in hvs or h not in rps)
        if not missing:
            return True
        if discovered[0] is None or time.monotonic() - discovered[0] > 10:
            discover()
        return "no hypervisor/resource provider for " + " ".join(
            f"nova-compute-{h}" for h in missing)
    wait("hypervisors", ready, [f"nova-compute-{h}" for h in HOSTS])


def wait_cinder():
    volume = api(session(timeout=15), "block-storage")
    backends = E["CC_CINDER_BACKENDS"].split()

    def ready():
        up = {(s["binary"], s["host"].partition("@")[2] or None)
              for s in volume.get("/os-services").json()["services"] if fresh(s, s["binary"])}
        wanted = {("cinder-scheduler", None)} | {("cinder-volume", b) for b in backends}
        missing = sorted(f"{b}@{h}" if h else b for b, h in wanted - up)
        if missing:
            return "not up: " + " ".join(missing)
        # a create is scheduled only on pools the scheduler has heard of
        pools = {p["name"].partition("@")[2].partition("#")[0] for p in volume.get(
            "/scheduler-stats/get_pools").json()["pools"]}
        missing = sorted(set(backends) - pools)
        return True if not missing else "cinder-scheduler has no pool of: " + " ".join(missing)
    wait("cinder services", ready, ["cinder-scheduler", "cinder-volume"])


def wait_heat():
    orchestration = api(session(timeout=15), "orchestration")
    # listing stacks is an RPC call to heat-engine: it answers once the engine listens
    wait("heat-engine", lambda: orchestration.get("/stacks").status_code == 200,
         ["heat-api", "heat-engine"])


# ---- purge: the state tests create, removed between tests

# The purge's admin token is kept for the next purge (one per test): every service's
# keystonemiddleware validates a token it has not seen against Keystone, which made the
# first call to each service cost 0.2-0.4 s, a new token each time.
TOKEN_FILE = os.path.join(RUN, "purge-auth.json")
#: A kept token is used while it has at least this long to live (seconds).
TOKEN_MARGIN = 600


def purge_session():
    """An admin session, on the token kept from the last purge when it is still good."""
    sess = session(timeout=60)
    try:
        with open(TOKEN_FILE) as f:
            state = f.read()
        sess.auth.set_auth_state(state)
        if sess.auth.auth_ref is None or sess.auth.auth_ref.will_expire_soon(TOKEN_MARGIN):
            sess.auth.invalidate()
    except (OSError, ValueError, KeyError, TypeError):
        sess.auth.invalidate()
    return sess


def keep_token(sess):
    state = sess.auth.get_auth_state()
    if state:
        tmp = f"{TOKEN_FILE}.{os.getpid()}"
        # an admin token: readable by this user only (the harness's umask is 022)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(state)
        os.replace(tmp, TOKEN_FILE)


def purge():
    # (a kept token Keystone no longer accepts, a cloud made again, is answered 401, on
    # which keystoneauth authenticates again and repeats the call)
    sess = purge_session()
    counts = {}
    # Servers go after their stacks, and everything that may hang on a server (volumes,
    # ports, Climate's Placement children, aggregates) after the servers; the rest is
    # independent and purged side by side.
    purge_stacks(sess, counts)
    purge_servers(sess, counts)
    branches = [purge_volumes, purge_images, purge_nova_rest, purge_neutron, purge_trusts]
    with concurrent.futures.ThreadPoolExecutor(len(branches)) as pool:
        for future in [pool.submit(branch, sess, counts) for branch in branches]:
            future.result()
    keep_token(sess)
    print(plan.summary(counts))


def gone(adapter_, path):
    return lambda: adapter_.get(path, raise_exc=False).status_code == 404 or f"{path} remains"


def purge_stacks(sess, counts):
    if "heat" not in SERVICES:
        return
    heat = api(sess, "orchestration")
    stacks = heat.get("/stacks", params={"global_tenant": True}).json()["stacks"]
    for st in stacks:
        base = heat.get_endpoint().rsplit("/", 1)[0] + f"/{st['project']}"
        heat.delete(f"{base}/stacks/{st['stack_name']}/{st['id']}", raise_exc=False)
    for st in stacks:
        base = heat.get_endpoint().rsplit("/", 1)[0] + f"/{st['project']}"
        url = f"{base}/stacks/{st['stack_name']}/{st['id']}"
        wait(f"stack {st['id']} deleted", lambda: heat.get(url, raise_exc=False).status_code
             == 404 or heat.get(url).json()["stack"]["stack_status"] == "DELETE_COMPLETE"
             or "stack remains", ["heat-engine"], timeout=120)
    counts["stacks"] = len(stacks)


def purge_servers(sess, counts):
    if "nova" not in SERVICES:
        return
    compute = nova(sess)
    servers = compute.get("/servers", params={"all_tenants": 1}).json()["servers"]
    for s in servers:
        compute.delete(f"/servers/{s['id']}", raise_exc=False)
    for s in servers:
        wait(f"server {s['id']} deleted", gone(compute, f"/servers/{s['id']}"),
             ["nova-api", "nova-conductor"], timeout=120)
    counts["servers"] = len(servers)


def purge_volumes(sess, counts):
    if "cinder" not in SERVICES:
        return
    volume = api(sess, "block-storage", default_microversion="3.60")
    # Cinder deletes no volume that has snapshots
    snaps = volume.get("/snapshots", params={"all_tenants": 1}).json()["snapshots"]
    for sn in snaps:
        volume.post(f"/snapshots/{sn['id']}/action", json={"os-force_delete": {}},
                    raise_exc=False)
    for sn in snaps:
        wait(f"snapshot {sn['id']} deleted", gone(volume, f"/snapshots/{sn['id']}"),
             ["cinder-volume"], timeout=120)
    counts["snapshots"] = len(snaps)
    vols = volume.get("/volumes", params={"all_tenants": 1}).json()["volumes"]
    for v in vols:
        volume.post(f"/volumes/{v['id']}/action", json={"os-force_delete": {}},
                    raise_exc=False)
    for v in vols:
        wait(f"volume {v['id']} deleted", gone(volume, f"/volumes/{v['id']}"),
             ["cinder-volume"], timeout=120)
    counts["volumes"] = len(vols)
    types = plan.extra_volume_types(
        volume.get("/types", params={"is_public": "None"}).json()["volume_types"])
    for t in types:
        volume.delete(f"/types/{t['id']}", raise_exc=False)
    counts["volume_types"] = len(types)


def purge_images(sess, counts):
    if "glance" not in SERVICES:
        return
    image = api(sess, "image")
    images = plan.extra_images(
        image.get("/v2/images", params={"limit": 1000}).json()["images"])
    for i in images:
        if i.get("protected"):
            image.patch(f"/v2/images/{i['id']}", json=[
                {"op": "replace", "path": "/protected", "value": False}],
                headers={"Content-Type": "application/openstack-images-v2.1-json-patch"})
        image.delete(f"/v2/images/{i['id']}", raise_exc=False)
    counts["images"] = len(images)


def purge_nova_rest(sess, counts):
    """Server groups, aggregates and flavors, then what Climate left in Placement (its
    children leave the aggregates first)."""
    if "nova" in SERVICES:
        compute = nova(sess)
        groups = compute.get("/os-server-groups", params={"all_projects": True}
                             ).json()["server_groups"]
        for g in groups:
            compute.delete(f"/os-server-groups/{g['id']}")
        counts["server_groups"] = len(groups)
        aggregates = compute.get("/os-aggregates").json()["aggregates"]
        for a in aggregates:
            for h in a.get("hosts") or []:
                compute.post(f"/os-aggregates/{a['id']}/action",
                             json={"remove_host": {"host": h}})
            compute.delete(f"/os-aggregates/{a['id']}")
        counts["aggregates"] = len(aggregates)
        flavors = plan.extra_flavors(
            compute.get("/flavors", params={"is_public": "None"}).json()["flavors"])
        for f in flavors:
            compute.delete(f"/flavors/{f['id']}")
        counts["flavors"] = len(flavors)
    if "placement" in SERVICES:
        purge_placement(sess, counts)


def purge_trusts(sess, counts):
    identity_api = api(sess, "identity")
    trusts = identity_api.get("/OS-TRUST/trusts").json()["trusts"]
    for t in trusts:
        identity_api.delete(f"/OS-TRUST/trusts/{t['id']}", raise_exc=False)
    counts["trusts"] = len(trusts)


def purge_neutron(sess, counts):
    """Floating IPs, routers, then every network but "public" with its ports and subnets."""
    if "neutron" not in SERVICES:
        return
    net_api = api(sess, "network")
    fips = net_api.get("/v2.0/floatingips").json()["floatingips"]
    for f in fips:
        net_api.delete(f"/v2.0/floatingips/{f['id']}", raise_exc=False)
    counts["floating_ips"] = len(fips)
    routers = net_api.get("/v2.0/routers").json()["routers"]
    for r in routers:
        ports = net_api.get("/v2.0/ports", params={"device_id": r["id"]}).json()["ports"]
        for p in plan.router_interfaces(ports):
            net_api.put(f"/v2.0/routers/{r['id']}/remove_router_interface",
                        json={"port_id": p["id"]}, raise_exc=False)
        net_api.delete(f"/v2.0/routers/{r['id']}", raise_exc=False)
    counts["routers"] = len(routers)
    nets = plan.extra_networks(net_api.get("/v2.0/networks").json()["networks"])
    for n in nets:
        for p in net_api.get("/v2.0/ports", params={"network_id": n["id"]}).json()["ports"]:
            net_api.delete(f"/v2.0/ports/{p['id']}", raise_exc=False)
        net_api.delete(f"/v2.0/networks/{n['id']}", raise_exc=False)
    counts["networks"] = len(nets)


def purge_placement(sess, counts):
    """What Climate's instance reservations leave in Placement when a test fails before their
    end: the inventories and aggregates of its child providers (climate-<host>), emptied when
    no allocation holds them, then its CUSTOM_RESERVATION_* resource classes.  The children
    themselves stay, as Climate leaves them: nova-compute caches its node's provider tree and
    fails every build on the host while a cached child answers 404."""
    placement = api(sess, "placement", default_microversion="1.26")
    emptied = held = 0
    providers = placement.get("/resource_providers").json()["resource_providers"]
    for rp in plan.climate_children(providers):
        base = f"/resource_providers/{rp['uuid']}"
        if placement.get(f"{base}/allocations").json()["allocations"]:
            # servers the purge could not delete still use it: left as it is
            held += 1
            continue
        inventories = placement.get(f"{base}/inventories").json()["inventories"]
        aggregates = placement.get(f"{base}/aggregates").json()["aggregates"]
        clear_inventories, clear_aggregates = plan.emptying(inventories, aggregates)
        if not (clear_inventories or clear_aggregates):
            continue
        try:
            if clear_inventories:
                placement.delete(f"{base}/inventories")
            if clear_aggregates:
                # the generation changed with the inventories: read it again
                generation = placement.get(base).json()["generation"]
                placement.put(f"{base}/aggregates", json={
                    "aggregates": [], "resource_provider_generation": generation})
        except ks_exc.HttpError as e:
            # a write racing this one (409): left for the next purge, not fatal
            sys.stderr.write(f"cloud-harness: purge: {rp['name']} not emptied: {e}\n")
            held += 1
            continue
        emptied += 1
    counts["climate_providers_emptied"] = emptied
    if held:
        counts["climate_providers_left"] = held
    classes = plan.reservation_classes(
        placement.get("/resource_classes").json()["resource_classes"])
    deleted = 0
    for name in classes:
        # 409 while an inventory (a provider still in use) has the class
        if placement.delete(f"/resource_classes/{name}", raise_exc=False).status_code in (204, 404):
            deleted += 1
    counts["climate_resource_classes"] = deleted


COMMANDS = {"identity": identity, "resources": resources, "wait-nova": wait_nova,
            "wait-hypervisors": wait_hypervisors, "wait-cinder": wait_cinder,
            "wait-heat": wait_heat, "purge": purge}

if __name__ == "__main__":
    for command in sys.argv[1:]:
        started = time.monotonic()
        try:
            COMMANDS[command]()
        except ks_exc.ClientException as e:
            sys.exit(f"cloud-harness: {command} failed: {type(e).__name__}: {e}")
        if command != "purge":
            sys.stderr.write(f"{time.strftime('%H:%M:%S')} cloud-harness: start: {command} done "
                             f"in {time.monotonic() - started:.1f} s\n")
