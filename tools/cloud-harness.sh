#!/usr/bin/env bash
# cloud-harness.sh - a real OpenStack control plane on 127.0.0.1 for Climate's integration tests.
#
# Installs from PyPI (pinned, OpenStack 2026.1), configures and runs on 127.0.0.1:
#   Keystone, Placement, Nova (API, conductor, scheduler, one nova-compute per fake hypervisor),
#   Glance (file store), a Neutron API server (ML2, no agents), Cinder (fake volume driver, one
#   back end per finite pool) and Heat (API + engine), against an existing MariaDB/MySQL and
#   RabbitMQ.
# It registers Climate in the Keystone catalog (type "reservation", service user "climate") and
# can load Climate's out-of-tree scheduler filters into nova-scheduler and cinder-scheduler.
#
# Usage: tools/cloud-harness.sh COMMAND [ARGS]
#   up              install + configure + sync databases + start + bootstrap (idempotent;
#                   services whose configuration changed are restarted)
#   stop            stop every process this harness started (by the PIDs it recorded)
#   restart [SVC..] stop and start again (all services, or the named ones)
#   status          one line per process (state, RSS MiB); exit 1 when one is down
#   purge           reset cloud state between tests: stacks, servers, volume snapshots, volumes,
#                   volume types but __DEFAULT__, images but fake-image, floating IPs, routers,
#                   networks but "public" (with their ports and subnets), server groups,
#                   aggregates, extra flavors, trusts; in Placement, Climate's child providers
#                   (climate-*) emptied of inventories and aggregates when nothing is allocated
#                   on them (they are kept), and its CUSTOM_RESERVATION_* resource classes
#   clean           stop, drop the databases (and climate_it, the integration tests' one) and
#                   the RabbitMQ vhost, remove all state but the venv
#   openrc [WHO]    shell exports for WHO = admin (default) | demo | alt | reader | climate
#   env | json      ports, URLs, users and passwords, as KEY=VALUE lines or as JSON
#   logs [SVC]      list the log files, or print the tail of one
#   install | configure | dbsync | start   the single steps of "up"
#
# Settings (environment; "up"/"configure" save them in $CLIMATE_CLOUD_DIR/settings.env, where
# later commands find them unless the environment overrides them; "clean" forgets them):
#   CLIMATE_CLOUD_DIR   state directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/climate-cloud)
#   CLIMATE_CLOUD_VENV  virtualenv of the cloud (default $CLIMATE_CLOUD_DIR/venv)
#   PORT_OFFSET         added to every service port (keystone = 5000 + PORT_OFFSET, ...); a
#                       non-zero offset also gives its own default DB_PREFIX and RABBIT_VHOST,
#                       so that a second cloud (own CLIMATE_CLOUD_DIR) can run beside the first
#   CLIMATE_API_PORT    port of Climate's API in the catalog (default 1234 + PORT_OFFSET)
#   SERVICES            default "keystone placement glance neutron nova cinder heat"
#   COMPUTE_HOSTS       fake hypervisors, one nova-compute each (default "compute1 compute2 compute3")
#   FAKE_VCPUS FAKE_RAM_MB FAKE_DISK_GB   size of each fake hypervisor
#   NOVA_FILTER_PATH    extra PYTHONPATH of nova-scheduler (where an out-of-tree filter lives)
#   NOVA_EXTRA_FILTERS  comma-separated filter classes to make available and enable
#                       (e.g. package.module.FilterClass)
#   NOVA_ENABLED_FILTERS  Nova's own enabled filters (the extra ones are appended)
#   CINDER_BACKENDS_GB  one fake Cinder back end (fake1, fake2, ...) per value: the size in GB of
#                       its single pool, or "infinite" (default "100 200")
#   CINDER_FILTER_PATH  extra PYTHONPATH of cinder-scheduler (a directory holding a filter module
#                       and the .dist-info declaring its cinder.scheduler.filters entry point)
#   CINDER_EXTRA_FILTERS  comma-separated filter class names appended to Cinder's
#                       scheduler_default_filters (e.g. ClimateCinderFilter)
#   HEAT_PLUGIN_DIRS    comma-separated directories of resource plugins heat-engine loads
#                       (heat.conf plugin_dirs; e.g. climate/heat_plugin for OS::Climate::Lease)
#   PUBLIC_CIDR         the external network "public" (flat, physnet "public"): its subnet
#                       (default 203.0.113.0/24); Neutron's allocation pool is its first half
#                       (.2 to .127), the rest is left for addresses registered to Climate
#   VLAN_RANGES         Neutron's VLAN ranges (default physnet1:1000:1099)
#   NOTIFY_DRIVER       oslo.messaging notification driver of Nova/Cinder (default noop)
#   DB_HOST DB_PORT DB_USER DB_PASSWORD DB_SOCKET DB_PREFIX (default cc_, or cc${PORT_OFFSET}_)
#   RABBIT_HOST RABBIT_PORT RABBIT_USER RABBIT_PASSWORD RABBIT_VHOST (default climate_cloud[_OFFSET],
#                       created with rabbitmqctl when possible, else the default vhost is used)
#   ADMIN_PASSWORD SERVICE_PASSWORD DEMO_PASSWORD ALT_PASSWORD READER_PASSWORD
#   START_TIMEOUT       seconds each wait may take (default 180)
#
# Exit status: 0 on success. When a service fails to start, the harness names it, prints the
# tail of its log and exits 1.
set -euo pipefail
umask 022

CLOUD_DIR=${CLIMATE_CLOUD_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/climate-cloud}
# the harness's Python parts (REST helper, fake drivers) live beside it in tools/cloud/
TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SETTINGS_FILE=$CLOUD_DIR/settings.env

# Knobs that are saved by "configure" and reloaded by later commands.
KNOBS="PYTHON CLIMATE_CLOUD_VENV PORT_OFFSET CLIMATE_API_PORT SERVICES COMPUTE_HOSTS FAKE_VCPUS
FAKE_RAM_MB FAKE_DISK_GB NOVA_FILTER_PATH NOVA_EXTRA_FILTERS NOVA_ENABLED_FILTERS NOTIFY_DRIVER
CINDER_BACKENDS_GB CINDER_FILTER_PATH CINDER_EXTRA_FILTERS HEAT_PLUGIN_DIRS PUBLIC_CIDR VLAN_RANGES
REGION DB_HOST DB_PORT DB_USER DB_PASSWORD DB_SOCKET DB_PREFIX RABBIT_HOST RABBIT_PORT RABBIT_USER
RABBIT_PASSWORD RABBIT_VHOST ADMIN_PASSWORD SERVICE_PASSWORD DEMO_PASSWORD ALT_PASSWORD
READER_PASSWORD WSGI_THREADS START_TIMEOUT"

if [ -f "$SETTINGS_FILE" ]; then
  while IFS='=' read -r _key _value; do
    case " $(echo $KNOBS) " in *" $_key "*) ;; *) continue ;; esac
    [ -n "${!_key+set}" ] || export "$_key=$_value"
  done < "$SETTINGS_FILE"
fi

PYTHON=${PYTHON:-python3}
CLIMATE_CLOUD_VENV=${CLIMATE_CLOUD_VENV:-$CLOUD_DIR/venv}
PORT_OFFSET=${PORT_OFFSET:-0}
CLIMATE_API_PORT=${CLIMATE_API_PORT:-$((1234 + PORT_OFFSET))}
SERVICES=${SERVICES:-"keystone placement glance neutron nova cinder heat"}
COMPUTE_HOSTS=${COMPUTE_HOSTS:-"compute1 compute2 compute3"}
FAKE_VCPUS=${FAKE_VCPUS:-32}
FAKE_RAM_MB=${FAKE_RAM_MB:-131072}
FAKE_DISK_GB=${FAKE_DISK_GB:-2048}
NOVA_FILTER_PATH=${NOVA_FILTER_PATH:-}
NOVA_EXTRA_FILTERS=${NOVA_EXTRA_FILTERS:-}
# AvailabilityZoneFilter is gone from Nova 33: never list it.
NOVA_ENABLED_FILTERS=${NOVA_ENABLED_FILTERS:-ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,SameHostFilter,DifferentHostFilter}
NOTIFY_DRIVER=${NOTIFY_DRIVER:-noop}
CINDER_BACKENDS_GB=${CINDER_BACKENDS_GB:-100 200}
CINDER_FILTER_PATH=${CINDER_FILTER_PATH:-}
CINDER_EXTRA_FILTERS=${CINDER_EXTRA_FILTERS:-}
HEAT_PLUGIN_DIRS=${HEAT_PLUGIN_DIRS:-}
PUBLIC_CIDR=${PUBLIC_CIDR:-203.0.113.0/24}
VLAN_RANGES=${VLAN_RANGES:-physnet1:1000:1099}
REGION=${REGION:-RegionOne}
DB_HOST=${DB_HOST:-127.0.0.1}
DB_PORT=${DB_PORT:-3306}
DB_USER=${DB_USER:-root}
DB_PASSWORD=${DB_PASSWORD:-}
DB_SOCKET=${DB_SOCKET:-}
# a second cloud (PORT_OFFSET != 0) gets databases and a vhost of its own by default
if [ "$PORT_OFFSET" = 0 ]; then _instance=""; else _instance=$PORT_OFFSET; fi
DB_PREFIX=${DB_PREFIX:-cc${_instance}_}
RABBIT_HOST=${RABBIT_HOST:-127.0.0.1}
RABBIT_PORT=${RABBIT_PORT:-5672}
RABBIT_USER=${RABBIT_USER:-guest}
RABBIT_PASSWORD=${RABBIT_PASSWORD:-guest}
RABBIT_VHOST=${RABBIT_VHOST-climate_cloud${_instance:+_$_instance}}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin}
SERVICE_PASSWORD=${SERVICE_PASSWORD:-service}
DEMO_PASSWORD=${DEMO_PASSWORD:-demo}
ALT_PASSWORD=${ALT_PASSWORD:-alt}
READER_PASSWORD=${READER_PASSWORD:-reader}
WSGI_THREADS=${WSGI_THREADS:-4}
START_TIMEOUT=${START_TIMEOUT:-180}

IP=127.0.0.1
KEYSTONE_PORT=$((5000 + PORT_OFFSET))
PLACEMENT_PORT=$((8778 + PORT_OFFSET))
NOVA_PORT=$((8774 + PORT_OFFSET))
GLANCE_PORT=$((9292 + PORT_OFFSET))
NEUTRON_PORT=$((9696 + PORT_OFFSET))
CINDER_PORT=$((8776 + PORT_OFFSET))
HEAT_PORT=$((8004 + PORT_OFFSET))
AUTH_URL=http://$IP:$KEYSTONE_PORT/v3

VENV=$CLIMATE_CLOUD_VENV
BIN=$VENV/bin
ETC=$CLOUD_DIR/etc
DATA=$CLOUD_DIR/data
LOGS=$CLOUD_DIR/log
RUN=$CLOUD_DIR/run
LIB=$CLOUD_DIR/lib          # generated python helper (bootstrap, waits, purge)

# What gets installed. python-openstackclient is only there for people poking at the cloud.
PACKAGES="keystone openstack-placement nova glance neutron cinder openstack-heat
gunicorn pymysql python-openstackclient"

say() { printf '%s cloud-harness: %s\n' "$(date +%T)" "$*" >&2; }
die() { printf '%s cloud-harness: ERROR: %s\n' "$(date +%T)" "$*" >&2; exit 1; }
enabled() { [[ " $SERVICES " == *" $1 "* ]]; }

# ----------------------------------------------------------------------------------------------
# the python helper: Keystone bootstrap, flavors and image, waits, purge (REST via keystoneauth)
# ----------------------------------------------------------------------------------------------
write_helper() {
  mkdir -p "$LIB"
  install -m 644 "$TOOLS_DIR/cloud/cloud_helper.py" "$LIB/cloud_helper.py"
}

# ----------------------------------------------------------------------------------------------
# configure: every config file under $ETC, the fake virt driver and the helper under $LIB
# ----------------------------------------------------------------------------------------------
db_url() { # db_url NAME -> SQLAlchemy URL of database $DB_PREFIX$NAME
  local cred=$DB_USER
  [ -z "$DB_PASSWORD" ] || cred="$DB_USER:$DB_PASSWORD"
  if [ -n "$DB_SOCKET" ]; then
    echo "mysql+pymysql://$cred@localhost/$DB_PREFIX$1?unix_socket=$DB_SOCKET&charset=utf8"
  else
    echo "mysql+pymysql://$cred@$DB_HOST:$DB_PORT/$DB_PREFIX$1?charset=utf8"
  fi
}
sql() { # sql ARGS... : the mysql client on our database server
  local a=(-u"$DB_USER")
  [ -z "$DB_PASSWORD" ] || a+=(-p"$DB_PASSWORD")
  if [ -n "$DB_SOCKET" ]; then a+=(-S "$DB_SOCKET"); else a+=(-h "$DB_HOST" -P "$DB_PORT" --protocol=tcp); fi
  mysql "${a[@]}" "$@"
}
databases() {
  local d=""
  enabled keystone && d+=" keystone"
  enabled placement && d+=" placement"
  enabled glance && d+=" glance"
  enabled neutron && d+=" neutron"
  enabled nova && d+=" nova_api nova nova_cell0"
  enabled cinder && d+=" cinder"
  enabled heat && d+=" heat"
  echo $d
}
rabbit_url() {
  echo "rabbit://$RABBIT_USER:$RABBIT_PASSWORD@$RABBIT_HOST:$RABBIT_PORT/$RABBIT_VHOST"
}

# [keystone_authtoken] of a service whose Keystone user is $1
authtoken_section() {
  cat <<EOT
[keystone_authtoken]
www_authenticate_uri = $AUTH_URL
auth_url = $AUTH_URL
auth_type = password
user_domain_name = Default
project_domain_name = Default
project_name = service
username = $1
password = $SERVICE_PASSWORD
region_name = $REGION
service_token_roles_required = true
EOT
}
# a keystoneauth section [$1] with the credentials of service user $2 (project service)
service_creds_section() {
  cat <<EOT
[$1]
auth_url = $AUTH_URL
auth_type = password
user_domain_name = Default
project_domain_name = Default
project_name = service
username = $2
password = $SERVICE_PASSWORD
region_name = $REGION
EOT
}

# Some WSGI apps parse sys.argv for their config files: gunicorn's own arguments must not reach
# them. write_wsgi NAME MODULE [CONFIG ARGS...] writes $ETC/wsgi/NAME_wsgi.py for gunicorn.
write_wsgi() {
  local name=$1 module=$2 argv="'$1'"
  shift 2
  local a
  for a in "$@"; do argv+=", '$a'"; done
  cat > "$ETC/wsgi/${name}_wsgi.py" <<EOT
# generated by cloud-harness.sh: the WSGI app must see its own argv, not gunicorn's
import sys

sys.argv = [$argv]
from $module import application  # noqa: E402,F401
EOT
}

conf_keystone() {
  mkdir -p "$ETC/keystone"
  cat > "$ETC/keystone/keystone.conf" <<EOT
[DEFAULT]
debug = false
[database]
connection = $(db_url keystone)
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = $ETC/keystone/fernet-keys
[fernet_receipts]
key_repository = $ETC/keystone/fernet-keys
[credential]
key_repository = $ETC/keystone/credential-keys
[identity]
# test passwords: 4 bcrypt rounds instead of 12 (0.25 s per password authentication)
password_hash_rounds = 4
[oslo_policy]
enforce_new_defaults = true
enforce_scope = true
EOT
  write_wsgi keystone keystone.wsgi.api
}

conf_placement() {
  mkdir -p "$ETC/placement"
  { cat <<EOT
[DEFAULT]
debug = false
[api]
auth_strategy = keystone
[placement_database]
connection = $(db_url placement)
EOT
    authtoken_section placement; } > "$ETC/placement/placement.conf"
  write_wsgi placement placement.wsgi.api
}

conf_glance() {
  mkdir -p "$ETC/glance" "$DATA/glance/images" "$DATA/glance/staging" "$DATA/glance/tasks"
  { cat <<EOT
[DEFAULT]
debug = false
bind_host = $IP
bind_port = $GLANCE_PORT
workers = 1
enabled_backends = fs:file
[database]
connection = $(db_url glance)
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $DATA/glance/images
[os_glance_staging_store]
filesystem_store_datadir = $DATA/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = $DATA/glance/tasks
[paste_deploy]
flavor = keystone
[oslo_concurrency]
lock_path = $DATA/locks
EOT
    authtoken_section glance; } > "$ETC/glance/glance-api.conf"
  cp "$VENV/etc/glance/glance-api-paste.ini" "$ETC/glance/"
  write_wsgi glance glance.wsgi.api
}

# the API server alone: ML2 without mechanism drivers, no agents; the router plugin for floating
# IPs (made and deleted in Neutron's database: no L3 agent needed), VLAN segments for networks
conf_neutron() {
  mkdir -p "$ETC/neutron" "$DATA/neutron"
  { cat <<EOT
[DEFAULT]
debug = false
core_plugin = ml2
service_plugins = router
auth_strategy = keystone
transport_url = $(rabbit_url)
api_paste_config = $ETC/neutron/api-paste.ini
state_path = $DATA/neutron
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
rpc_workers = 0
rpc_state_report_workers = 0
[database]
connection = $(db_url neutron)
[oslo_concurrency]
lock_path = $DATA/locks
[agent]
root_helper = true
EOT
    authtoken_section neutron; } > "$ETC/neutron/neutron.conf"
  cat > "$ETC/neutron/ml2_conf.ini" <<EOT
[ml2]
type_drivers = flat,vlan
tenant_network_types =
mechanism_drivers =
extension_drivers = port_security
[ml2_type_flat]
flat_networks = *
[ml2_type_vlan]
network_vlan_ranges = $VLAN_RANGES
EOT
  cp "$VENV/etc/neutron/api-paste.ini" "$ETC/neutron/"
  write_wsgi neutron neutron.wsgi.api --config-file "$ETC/neutron/neutron.conf" \
    --config-file "$ETC/neutron/ml2_conf.ini"
}

conf_nova() {
  mkdir -p "$ETC/nova" "$DATA/nova"
  local f filters=$NOVA_ENABLED_FILTERS
  for f in ${NOVA_EXTRA_FILTERS//,/ }; do filters+=",${f##*.}"; done
  { cat <<EOT
[DEFAULT]
debug = false
transport_url = $(rabbit_url)
compute_driver = $FAKE_DRIVER_CLASS
my_ip = $IP
state_path = $DATA/nova
osapi_compute_workers = 1
metadata_workers = 1
allow_resize_to_same_host = true
graceful_shutdown_timeout = 5
instance_usage_audit = false
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = $ETC/nova/api-paste.ini
[api_database]
connection = $(db_url nova_api)
[database]
connection = $(db_url nova)
[quota]
# tests boot many servers: no per-project limit (the default is 10 instances)
instances = -1
cores = -1
ram = -1
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 2
[oslo_concurrency]
lock_path = $DATA/locks
[oslo_messaging_notifications]
driver = $NOTIFY_DRIVER
[glance]
region_name = $REGION
[vnc]
enabled = false
[spice]
enabled = false
[os_vif_linux_bridge]
use_ipv6 = false
EOT
    service_creds_section neutron nova
    service_creds_section cinder nova | sed 's/^region_name/os_region_name/'
    service_creds_section placement nova
    service_creds_section service_user nova
    echo "send_service_user_token = true"
    authtoken_section nova; } > "$ETC/nova/nova.conf"
  cp "$VENV/etc/nova/api-paste.ini" "$ETC/nova/"
  { printf '[filter_scheduler]\navailable_filters = nova.scheduler.filters.all_filters\n'
    for f in ${NOVA_EXTRA_FILTERS//,/ }; do echo "available_filters = $f"; done
    echo "enabled_filters = $filters"; } > "$ETC/nova/scheduler.conf"
  local h
  for h in $COMPUTE_HOSTS; do
    mkdir -p "$DATA/nova/$h"
    printf '[DEFAULT]\nhost = %s\nstate_path = %s\n' "$h" "$DATA/nova/$h" > "$ETC/nova/compute-$h.conf"
  done
  write_wsgi nova nova.wsgi.osapi_compute
}

cinder_backends() { # fake1 fake2 ...: one per value of CINDER_BACKENDS_GB
  local i=0 gb
  for gb in $CINDER_BACKENDS_GB; do i=$((i + 1)); printf 'fake%d ' "$i"; done
}

conf_cinder() {
  mkdir -p "$ETC/cinder" "$DATA/cinder"
  local f b i=0 filters=AvailabilityZoneFilter,CapacityFilter,CapabilitiesFilter backends
  local sizes=($CINDER_BACKENDS_GB)
  for f in ${CINDER_EXTRA_FILTERS//,/ }; do filters+=",${f##*.}"; done
  backends=$(cinder_backends)
  [ -n "$backends" ] || die "CINDER_BACKENDS_GB is empty: give at least one pool size"
  { cat <<EOT
[DEFAULT]
debug = false
transport_url = $(rabbit_url)
auth_strategy = keystone
my_ip = $IP
host = climate-cloud
state_path = $DATA/cinder
api_paste_config = $ETC/cinder/api-paste.ini
# else /etc/cinder's: without it every list filter of a non-admin is refused
resource_query_filters_file = $ETC/cinder/resource_filters.json
osapi_volume_workers = 1
enabled_backends = $(echo $backends | tr ' ' ,)
scheduler_default_filters = $filters
# the scheduler learns each pool's free capacity within seconds (tests fill pools, then purge)
periodic_interval = 2
periodic_fuzzy_delay = 0
backend_stats_polling_interval = 3
quota_volumes = -1
quota_snapshots = -1
quota_gigabytes = -1
glance_api_servers = http://$IP:$GLANCE_PORT
[database]
connection = $(db_url cinder)
[oslo_concurrency]
lock_path = $DATA/locks
[oslo_messaging_notifications]
driver = $NOTIFY_DRIVER
EOT
    for b in $backends; do
      printf '[%s]\nvolume_driver = %s\nvolume_backend_name = %s\nfake_total_capacity_gb = %s\n' \
        "$b" "$FAKE_VOLUME_DRIVER_CLASS" "$b" "${sizes[i]}"
      i=$((i + 1))
    done
    service_creds_section nova cinder
    service_creds_section service_user cinder
    echo "send_service_user_token = true"
    authtoken_section cinder; } > "$ETC/cinder/cinder.conf"
  cp "$VENV/etc/cinder/api-paste.ini" "$ETC/cinder/"
  cp "$VENV/etc/cinder/resource_filters.json" "$ETC/cinder/" 2>/dev/null || true
  write_wsgi cinder cinder.wsgi.api --config-file "$ETC/cinder/cinder.conf"
}

conf_heat() {
  mkdir -p "$ETC/heat" "$DATA/heat"
  { cat <<EOT
[DEFAULT]
debug = false
transport_url = $(rabbit_url)
num_engine_workers = 1
region_name_for_services = $REGION
heat_metadata_server_url = http://$IP:8000
heat_waitcondition_server_url = http://$IP:8000/v1/waitcondition
stack_user_domain_name = heat
stack_domain_admin = heat_domain_admin
stack_domain_admin_password = $SERVICE_PASSWORD
deferred_auth_method = trusts
$([ -z "$HEAT_PLUGIN_DIRS" ] || echo "plugin_dirs = $HEAT_PLUGIN_DIRS")
[heat_api]
bind_host = $IP
bind_port = $HEAT_PORT
workers = 1
[paste_deploy]
api_paste_config = $ETC/heat/api-paste.ini
[database]
connection = $(db_url heat)
[oslo_concurrency]
lock_path = $DATA/locks
[oslo_policy]
policy_file = $ETC/heat/policy.yaml
[clients_keystone]
auth_uri = http://$IP:$KEYSTONE_PORT
[trustee]
auth_url = $AUTH_URL
auth_type = password
user_domain_name = Default
username = heat
password = $SERVICE_PASSWORD
EOT
    authtoken_section heat; } > "$ETC/heat/heat.conf"
  cp "$VENV/etc/heat/api-paste.ini" "$ETC/heat/"
  # purge lists every project's stacks: let the admin do that
  printf '"stacks:global_index": "role:admin"\n' > "$ETC/heat/policy.yaml"
  write_wsgi heat heat.wsgi.api --config-file "$ETC/heat/heat.conf"
}

# Nova's fake.FakeDriver makes up random node ids and cannot be restarted: use the single-node
# variant (node = CONF.host, stable identity in state_path), sized from the environment.
FAKE_DRIVER_CLASS=climate_cloud_fake.Driver
write_fake_driver() {
  local virt
  virt=$("$BIN/python" -c 'import nova.virt, os; print(os.path.dirname(nova.virt.__file__))')
  install -m 644 "$TOOLS_DIR/cloud/fake_compute.py" "$virt/climate_cloud_fake.py"
}

# Cinder's fake driver reports an infinite pool, which neither CapacityFilter nor Climate can
# count, and its Glance transfers need a block device and sudo: a subclass with a finite pool
# ([BACKEND] fake_total_capacity_gb; free = total - the volumes Cinder put there; thick), whose
# upload to an image sends a few bytes and whose volume from an image downloads nothing.
FAKE_VOLUME_DRIVER_CLASS=cinder.volume.drivers.climate_cloud_fake.Driver
fake_volume_driver_file() {
  "$BIN/python" -c 'import cinder.volume.drivers as d, os; print(os.path.dirname(d.__file__))' \
    | sed 's,$,/climate_cloud_fake.py,'
}
write_fake_volume_driver() {
  install -m 644 "$TOOLS_DIR/cloud/fake_volume.py" "$(fake_volume_driver_file)"
}

save_settings() {
  local k
  for k in $KNOBS; do printf '%s=%s\n' "$k" "${!k}"; done > "$SETTINGS_FILE"
}

cmd_configure() {
  [ -x "$BIN/python" ] || die "no venv at $VENV: run '$0 install' (or 'up') first"
  mkdir -p "$ETC/wsgi" "$DATA/locks" "$LOGS" "$RUN" "$LIB"
  ensure_rabbit_vhost
  local s
  for s in $SERVICES; do
    case $s in
      keystone|placement|glance|neutron|nova|cinder|heat) "conf_$s" ;;
      *) die "unknown service '$s' in SERVICES" ;;
    esac
  done
  enabled nova && write_fake_driver
  enabled cinder && write_fake_volume_driver
  write_helper
  save_settings
  say "configure: files in $ETC"
}

# A RabbitMQ vhost of our own keeps the cloud's queues away from other users of the broker.
ensure_rabbit_vhost() {
  [ -n "$RABBIT_VHOST" ] || return 0
  if "$BIN/python" - "$RABBIT_HOST:$RABBIT_PORT" "$RABBIT_USER" "$RABBIT_PASSWORD" "$RABBIT_VHOST" \
       2>/dev/null <<'PY'
import sys
import amqp
conn = amqp.Connection(sys.argv[1], userid=sys.argv[2], password=sys.argv[3],
                       virtual_host=sys.argv[4], connect_timeout=5)
conn.connect()
conn.close()
PY
  then
    return 0
  fi
  if command -v rabbitmqctl >/dev/null 2>&1 \
     && { rabbitmqctl -q list_vhosts 2>/dev/null | grep -qxF "$RABBIT_VHOST" \
          || rabbitmqctl -q add_vhost "$RABBIT_VHOST" >/dev/null 2>&1; } \
     && rabbitmqctl -q set_permissions -p "$RABBIT_VHOST" "$RABBIT_USER" '.*' '.*' '.*' >/dev/null 2>&1
  then
    echo "$RABBIT_VHOST" > "$CLOUD_DIR/rabbit-vhost"
    say "configure: RabbitMQ vhost '$RABBIT_VHOST' ready"
  else
    say "WARNING: cannot create RabbitMQ vhost '$RABBIT_VHOST' (rabbitmqctl missing or not allowed); using the default vhost"
    RABBIT_VHOST=
  fi
}

# ----------------------------------------------------------------------------------------------
# dbsync: create the databases and their schemas (skipped when nothing changed)
# ----------------------------------------------------------------------------------------------
preflight() {
  command -v curl >/dev/null || die "curl is required"
  command -v mysql >/dev/null || die "the mysql/mariadb client is required"
  sql -e 'SELECT 1' >/dev/null 2>&1 \
    || die "cannot reach MariaDB/MySQL as $DB_USER at ${DB_SOCKET:-$DB_HOST:$DB_PORT} (DB_* settings)"
  (exec 3<>"/dev/tcp/$RABBIT_HOST/$RABBIT_PORT") 2>/dev/null \
    || die "cannot reach RabbitMQ at $RABBIT_HOST:$RABBIT_PORT (RABBIT_* settings)"
}

dbsync_fingerprint() {
  { databases; db_url x; echo "$AUTH_URL $ADMIN_PASSWORD $REGION"
    "$BIN/pip" freeze 2>/dev/null \
      | grep -iE '^(nova|keystone|openstack-placement|glance|neutron|cinder|openstack-heat)=='
  } | sha256sum | cut -c1-16
}

# One function per service; "dbsync" runs them side by side, each logging to dbsync-NAME.log.
sync_keystone() {
  local km=("$BIN/keystone-manage" --config-file "$ETC/keystone/keystone.conf")
  "${km[@]}" db_sync
  if [ ! -e "$ETC/keystone/fernet-keys/0" ]; then
    "${km[@]}" fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
    "${km[@]}" credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
  fi
  "${km[@]}" bootstrap --bootstrap-password "$ADMIN_PASSWORD" --bootstrap-region-id "$REGION" \
    --bootstrap-admin-url "$AUTH_URL" --bootstrap-internal-url "$AUTH_URL" \
    --bootstrap-public-url "$AUTH_URL"
}
sync_placement() { "$BIN/placement-manage" --config-file "$ETC/placement/placement.conf" db sync; }
sync_glance() { "$BIN/glance-manage" --config-file "$ETC/glance/glance-api.conf" db_sync; }
sync_neutron() {
  "$BIN/neutron-db-manage" --config-file "$ETC/neutron/neutron.conf" \
    --config-file "$ETC/neutron/ml2_conf.ini" upgrade heads
}
sync_nova() {
  local nm=("$BIN/nova-manage" --config-file "$ETC/nova/nova.conf")
  "${nm[@]}" api_db sync
  "${nm[@]}" cell_v2 map_cell0 --database_connection "$(db_url nova_cell0)"
  "${nm[@]}" cell_v2 list_cells | grep -q ' cell1 ' || "${nm[@]}" cell_v2 create_cell --name cell1
  "${nm[@]}" db sync
}
sync_cinder() { "$BIN/cinder-manage" --config-file "$ETC/cinder/cinder.conf" db sync; }
sync_heat() { "$BIN/heat-manage" --config-file "$ETC/heat/heat.conf" db_sync; }

cmd_dbsync() {
  local d s t0=$SECONDS fp failed=""
  declare -A jobs=()
  mkdir -p "$LOGS" "$RUN"
  [ -f "$SETTINGS_FILE" ] || die "not configured: run '$0 up'"
  preflight
  claim_databases
  fp=$(dbsync_fingerprint)
  if [ "$(cat "$RUN/dbsync.done" 2>/dev/null)" = "$fp" ] && all_databases_exist; then
    say "dbsync: schemas up to date"
    return 0
  fi
  say "dbsync: creating schemas (logs: $LOGS/dbsync-*.log)"
  for d in $(databases); do
    sql -e "CREATE DATABASE IF NOT EXISTS \`$DB_PREFIX$d\` CHARACTER SET utf8mb4" \
      || die "cannot create database $DB_PREFIX$d"
  done
  for s in $SERVICES; do
    ( set -e; "sync_$s" ) >> "$LOGS/dbsync-$s.log" 2>&1 < /dev/null &
    jobs[$s]=$!
  done
  for s in "${!jobs[@]}"; do wait "${jobs[$s]}" || failed+=" $s"; done
  if [ -n "$failed" ]; then
    for s in $failed; do
      echo "--- last 30 lines of $LOGS/dbsync-$s.log ---" >&2
      tail -n 30 "$LOGS/dbsync-$s.log" >&2
    done
    die "schema sync failed for:$failed"
  fi
  echo "$fp" > "$RUN/dbsync.done"
  say "dbsync: done in $((SECONDS - t0)) s"
}

# Databases $DB_PREFIX* belong to one state directory: ${DB_PREFIX}harness.owner says which, so
# that a second cloud never migrates, bootstraps or drops the first one's databases.
db_owner() { sql -N -e "SELECT dir FROM \`${DB_PREFIX}harness\`.owner" 2>/dev/null || true; }
claim_databases() {
  local owner
  owner=$(db_owner)
  [ -z "$owner" ] || [ "$owner" = "$CLOUD_DIR" ] || die "databases ${DB_PREFIX}* belong to the \
cloud in $owner: give this one another PORT_OFFSET (or DB_PREFIX), or clean that one"
  if [ -z "$owner" ]; then
    sql -e "CREATE DATABASE IF NOT EXISTS \`${DB_PREFIX}harness\`;
            CREATE TABLE IF NOT EXISTS \`${DB_PREFIX}harness\`.owner (dir VARCHAR(1024));
            DELETE FROM \`${DB_PREFIX}harness\`.owner;
            INSERT INTO \`${DB_PREFIX}harness\`.owner VALUES ('${CLOUD_DIR//\'/\'\'}')"
  fi
}

# Ports of services that are not running yet must be free, before anything is migrated.
check_ports() {
  local name port
  define_services
  for name in "${SVC_ORDER[@]}"; do
    port=${SVC_PORT[$name]}
    if [ "$port" != - ] && ! running "$name" && port_in_use "$port"; then
      die "port $port (for $name) is taken by another program: set PORT_OFFSET"
    fi
  done
}

all_databases_exist() {
  local d
  for d in $(databases); do sql -e "USE \`$DB_PREFIX$d\`" 2>/dev/null || return 1; done
}

# ----------------------------------------------------------------------------------------------
# processes: each runs in its own session (pgid = pid); $RUN/NAME.pid holds "PID STARTTIME",
# so that a recycled PID is never mistaken for ours; $RUN/NAME.fp is the fingerprint of the
# command and configuration it was started with.
# ----------------------------------------------------------------------------------------------
proc_starttime() { # proc_starttime PID -> field 22 of /proc/PID/stat
  local stat fields
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  read -ra fields <<< "${stat##*) }"
  echo "${fields[19]}"
}
pid_of() { # pid_of NAME -> PID when NAME is running and is the process we started
  local pid start
  [ -f "$RUN/$1.pid" ] || return 1
  read -r pid start < "$RUN/$1.pid" || return 1
  [ -n "$pid" ] && [ "$(proc_starttime "$pid")" = "$start" ] || return 1
  echo "$pid"
}
running() { pid_of "$1" >/dev/null; }

# fingerprint FILES ARGS... : digest of a command line and of its configuration files
# (FILES: a space-separated list of files and directories)
fingerprint() {
  local files=$1 f
  shift
  { printf '%s\n' "$@"
    for f in $files; do
      if [ -d "$f" ]; then
        find "$f" -maxdepth 1 -type f \( -name '*.conf' -o -name '*.ini' -o -name '*.json' \
          -o -name '*.yaml' -o -name '*.py' \) -print0 | sort -z | xargs -0 cat
      else
        cat "$f"
      fi
    done
  } | sha256sum | cut -c1-16
}

# the directories of a PYTHONPATH that exist: an out-of-tree filter that changed restarts its
# scheduler
path_dirs() {
  local d
  for d in ${1//:/ }; do [ -d "$d" ] && printf '%s ' "$d"; done
  return 0
}

# The processes of this configuration: define NAME PORT FILES CMD... (PORT: "-" when none;
# FILES: what the fingerprint covers besides the command line).
declare -A SVC_CMD SVC_PORT SVC_FILES
SVC_ORDER=()
define() {
  local name=$1
  SVC_PORT[$name]=$2
  SVC_FILES[$name]=$3
  shift 3
  SVC_CMD[$name]=$(printf '%q ' "$@")
  SVC_ORDER+=("$name")
}
define_gunicorn() { # define_gunicorn NAME PORT CONFDIR [VAR=VALUE...]
  local name=$1 port=$2 confdir=$3
  shift 3
  define "$name" "$port" "$confdir" env "$@" "$BIN/gunicorn" --bind "$IP:$port" --workers 1 \
    --worker-class gthread --threads "$WSGI_THREADS" --timeout 300 --graceful-timeout 5 \
    --chdir "$ETC/wsgi" --no-control-socket --name "cc-$name" "${name%-api}_wsgi:application"
}
define_services() {
  local h nova_conf=$ETC/nova/nova.conf cinder_conf=$ETC/cinder/cinder.conf
  SVC_ORDER=()
  enabled keystone && define_gunicorn keystone "$KEYSTONE_PORT" "$ETC/keystone" \
    OS_KEYSTONE_CONFIG_DIR="$ETC/keystone"
  enabled placement && define_gunicorn placement "$PLACEMENT_PORT" "$ETC/placement" \
    OS_PLACEMENT_CONFIG_DIR="$ETC/placement"
  enabled glance && define_gunicorn glance "$GLANCE_PORT" "$ETC/glance" \
    OS_GLANCE_CONFIG_DIR="$ETC/glance"
  enabled neutron && define_gunicorn neutron "$NEUTRON_PORT" "$ETC/neutron" \
    OS_NEUTRON_CONFIG_DIR="$ETC/neutron"
  if enabled nova; then
    define_gunicorn nova-api "$NOVA_PORT" "$nova_conf $ETC/nova/api-paste.ini" \
      OS_NOVA_CONFIG_DIR="$ETC/nova"
    define nova-conductor - "$nova_conf" "$BIN/nova-conductor" --config-file "$nova_conf"
    # only the scheduler reads the filter settings (scheduler.conf) and the extra path
    define nova-scheduler - \
      "$nova_conf $ETC/nova/scheduler.conf $(path_dirs "$NOVA_FILTER_PATH")" \
      env PYTHONPATH="$NOVA_FILTER_PATH" \
      "$BIN/nova-scheduler" --config-file "$nova_conf" --config-file "$ETC/nova/scheduler.conf"
    for h in $COMPUTE_HOSTS; do
      define "nova-compute-$h" - "$nova_conf $ETC/nova/compute-$h.conf" env \
        CC_FAKE_VCPUS="$FAKE_VCPUS" CC_FAKE_RAM_MB="$FAKE_RAM_MB" CC_FAKE_DISK_GB="$FAKE_DISK_GB" \
        "$BIN/nova-compute" --config-file "$nova_conf" --config-file "$ETC/nova/compute-$h.conf"
    done
  fi
  if enabled cinder; then
    define_gunicorn cinder-api "$CINDER_PORT" "$ETC/cinder"
    define cinder-scheduler - "$ETC/cinder $(path_dirs "$CINDER_FILTER_PATH")" \
      env PYTHONPATH="$CINDER_FILTER_PATH" \
      "$BIN/cinder-scheduler" --config-file "$cinder_conf"
    define cinder-volume - "$ETC/cinder $(fake_volume_driver_file)" "$BIN/cinder-volume" \
      --config-file "$cinder_conf"
  fi
  if enabled heat; then
    define_gunicorn heat-api "$HEAT_PORT" "$ETC/heat"
    # a resource plugin that changed restarts heat-engine
    define heat-engine - "$ETC/heat $(path_dirs "${HEAT_PLUGIN_DIRS//,/:}")" "$BIN/heat-engine" \
      --config-file "$ETC/heat/heat.conf"
  fi
}
service_fingerprint() {
  eval "local cmd=(${SVC_CMD[$1]})"
  fingerprint "${SVC_FILES[$1]}" "${cmd[@]}"
}

# launch NAME: start it in a session of its own, record "PID STARTTIME" and its fingerprint
launch() {
  local name=$1 i port=${SVC_PORT[$1]}
  if [ "$port" != - ] && port_in_use "$port"; then
    die "port $port (for $name) is taken by another program: set PORT_OFFSET"
  fi
  rm -f "$RUN/$name.pid"
  echo "--- $(date '+%F %T') start: ${SVC_CMD[$name]}" >> "$LOGS/$name.log"
  eval "local cmd=(${SVC_CMD[$name]})"
  (cd "$CLOUD_DIR" && exec setsid bash -c \
     's=$(cat /proc/$$/stat); read -ra f <<< "${s##*) }"; echo "$$ ${f[19]}" > "$0"; exec "$@"' \
     "$RUN/$name.pid" "${cmd[@]}" >> "$LOGS/$name.log" 2>&1 < /dev/null 9>&- &)
  for ((i = 0; i < 100; i++)); do
    [ -s "$RUN/$name.pid" ] && { service_fingerprint "$name" > "$RUN/$name.fp"; return 0; }
    sleep 0.05
  done
  service_failed "$name" "could not be launched"
}

# ensure_running NAME...: restart those whose command or configuration changed (all of them
# stopped together), then start every one that is not running
ensure_running() {
  local name stale=()
  for name in "$@"; do
    if running "$name" && [ "$(cat "$RUN/$name.fp" 2>/dev/null)" != "$(service_fingerprint "$name")" ]; then
      stale+=("$name")
    fi
  done
  if [ ${#stale[@]} -gt 0 ]; then
    say "start: configuration changed, restarting: ${stale[*]}"
    stop_services "${stale[@]}"
  fi
  for name in "$@"; do running "$name" || launch "$name"; done
}

service_failed() { # service_failed NAME REASON : name it, show its log, exit 1
  local log=$LOGS/$1.log
  {
    echo "cloud-harness: SERVICE FAILED: $1: $2"
    if [ -f "$log" ]; then
      echo "--- last lines of $log (this start) ---"
      awk '/^--- .* start: /{n = 0} {line[n++] = $0} END {for (i = (n > 40 ? n - 40 : 0); i < n; i++) print line[i]}' "$log"
      echo "---"
    fi
  } >&2
  exit 1
}

port_in_use() { (exec 3<>"/dev/tcp/$IP/$1") 2>/dev/null; }

wait_http() { # wait_http NAME URL : until URL answers, NAME dies or START_TIMEOUT passes
  local name=$1 url=$2 deadline=$((SECONDS + START_TIMEOUT))
  while ! curl -s -o /dev/null -m 3 "$url"; do
    running "$name" || service_failed "$name" "exited while starting"
    [ $SECONDS -lt $deadline ] || service_failed "$name" "no answer on $url within $START_TIMEOUT s"
    sleep 0.25
  done
}

helper() { # the python helper (bootstrap, waits, purge), in the cloud's venv
  CC_RUN=$RUN CC_LOGS=$LOGS CC_AUTH_URL=$AUTH_URL CC_REGION=$REGION CC_IP=$IP \
  CC_SERVICES="$SERVICES" CC_COMPUTE_HOSTS="$COMPUTE_HOSTS" CC_START_TIMEOUT=$START_TIMEOUT \
  CC_CINDER_BACKENDS="$(cinder_backends)" CC_PUBLIC_CIDR=$PUBLIC_CIDR \
  CC_ADMIN_PASSWORD=$ADMIN_PASSWORD CC_SERVICE_PASSWORD=$SERVICE_PASSWORD \
  CC_DEMO_PASSWORD=$DEMO_PASSWORD CC_ALT_PASSWORD=$ALT_PASSWORD CC_READER_PASSWORD=$READER_PASSWORD \
  CC_PLACEMENT_URL=http://$IP:$PLACEMENT_PORT CC_NOVA_URL=http://$IP:$NOVA_PORT/v2.1 \
  CC_GLANCE_URL=http://$IP:$GLANCE_PORT CC_NEUTRON_URL=http://$IP:$NEUTRON_PORT \
  CC_CINDER_URL=http://$IP:$CINDER_PORT/v3 CC_HEAT_URL="http://$IP:$HEAT_PORT/v1/%(project_id)s" \
  CC_CLIMATE_URL=http://$IP:$CLIMATE_API_PORT/v1 \
  CC_NOVA_MANAGE="$BIN/nova-manage"$'\t'--config-file$'\t'"$ETC/nova/nova.conf" \
    "$BIN/python" "$LIB/cloud_helper.py" "$@"
}


cmd_start() {
  local t0=$SECONDS name
  [ -f "$SETTINGS_FILE" ] && [ -d "$ETC/wsgi" ] || die "not configured: run '$0 up'"
  mkdir -p "$LOGS" "$RUN"
  preflight
  write_helper
  define_services
  if enabled keystone; then
    ensure_running keystone
    wait_http keystone "$AUTH_URL"
    helper identity || die "keystone bootstrap failed"
    say "start: keystone ready after $((SECONDS - t0)) s"
  fi
  ensure_running "${SVC_ORDER[@]}"
  for name in "${SVC_ORDER[@]}"; do
    [ "${SVC_PORT[$name]}" = - ] || wait_http "$name" "http://$IP:${SVC_PORT[$name]}/"
  done
  say "start: every API answers after $((SECONDS - t0)) s"
  # flavors and image, then every service up and every hypervisor in Nova and Placement
  local steps=(resources)
  enabled nova && steps+=(wait-nova wait-hypervisors)
  enabled cinder && steps+=(wait-cinder)
  enabled heat && steps+=(wait-heat)
  helper "${steps[@]}" || exit 1
  for name in "${SVC_ORDER[@]}"; do
    running "$name" || service_failed "$name" "is not running"
  done
  say "start: all ${#SVC_ORDER[@]} processes up in $((SECONDS - t0)) s"
}

service_names() { # every process this configuration runs, in start order
  define_services
  printf '%s\n' "${SVC_ORDER[@]}"
}

# stop_services [NAME...] : TERM each process group, wait up to 10 s, then KILL what is left.
# Nova's services may ignore SIGTERM for a long while. Only PIDs recorded by spawn are touched.
stop_services() {
  local names=("$@") name pid pids=() i
  if [ ${#names[@]} -eq 0 ]; then
    shopt -s nullglob
    for name in "$RUN"/*.pid; do name=${name##*/}; names+=("${name%.pid}"); done
    shopt -u nullglob
  fi
  for name in "${names[@]}"; do
    if pid=$(pid_of "$name"); then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$RUN/$name.fp"
  done
  for ((i = 0; i < 40; i++)); do
    local left=0
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && left=1; done
    [ $left = 0 ] && break
    sleep 0.25
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  for name in "${names[@]}"; do rm -f "$RUN/$name.pid"; done
}

cmd_stop() {
  [ -d "$RUN" ] || { say "stop: nothing runs"; return 0; }
  stop_services "$@"
  say "stop: stopped${*:+ $*}"
}

cmd_status() {
  local name pid rss total=0 down=0
  printf '%-22s %-8s %-6s %s\n' SERVICE PID STATE RSS_MiB
  for name in $(service_names); do
    if pid=$(pid_of "$name"); then
      rss=$(ps -o rss= -g "$pid" 2>/dev/null | awk '{s += $1} END {print int(s / 1024)}')
      total=$((total + rss))
      printf '%-22s %-8s %-6s %s\n' "$name" "$pid" up "$rss"
    else
      printf '%-22s %-8s %-6s %s\n' "$name" - DOWN -
      down=$((down + 1))
    fi
  done
  echo "total RSS: $total MiB"
  [ $down = 0 ]
}

# ----------------------------------------------------------------------------------------------
# information for people and for test fixtures
# ----------------------------------------------------------------------------------------------
credentials() { # credentials WHO -> "USERNAME PASSWORD PROJECT"
  case ${1:-admin} in
    admin) echo "admin $ADMIN_PASSWORD admin" ;;
    demo) echo "demo $DEMO_PASSWORD demo" ;;
    alt) echo "alt $ALT_PASSWORD alt" ;;
    reader) echo "reader $READER_PASSWORD demo" ;;
    climate) echo "climate $SERVICE_PASSWORD service" ;;
    *) die "openrc: unknown user '$1' (admin, demo, alt, reader, climate)" ;;
  esac
}

cmd_openrc() {
  local user password project creds
  creds=$(credentials "${1:-admin}") || exit 1
  read -r user password project <<< "$creds"
  cat <<EOT
export OS_AUTH_URL=$AUTH_URL
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME=$user
export OS_PASSWORD=$password
export OS_PROJECT_NAME=$project
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=$REGION
export OS_INTERFACE=public
export PATH=$BIN:\$PATH
EOT
}

# Everything a test fixture needs, as shell-quoted KEY=VALUE lines (prefix CLOUD_).
cmd_env() {
  local k
  {
    echo "CLOUD_DIR=$CLOUD_DIR"
    echo "CLOUD_BIN=$BIN"
    echo "CLOUD_AUTH_URL=$AUTH_URL"
    echo "CLOUD_REGION=$REGION"
    echo "CLOUD_RABBIT_URL=$(rabbit_url)"
    echo "CLOUD_DB_URL_PREFIX=$(db_url '' | sed 's,/[^/]*$,/,')"
    echo "CLOUD_DB_PREFIX=$DB_PREFIX"
    echo "CLOUD_COMPUTE_HOSTS=$COMPUTE_HOSTS"
    echo "CLOUD_SERVICES=$SERVICES"
    echo "CLOUD_IMAGE=fake-image"
    echo "CLOUD_FLAVORS=m1.tiny m1.small m1.medium"
    echo "CLOUD_CLIMATE_API_PORT=$CLIMATE_API_PORT"
    echo "CLOUD_CLIMATE_URL=http://$IP:$CLIMATE_API_PORT/v1"
    echo "CLOUD_CLIMATE_DB=climate_it${_instance:+_$_instance}"
    for k in KEYSTONE PLACEMENT NOVA GLANCE NEUTRON CINDER HEAT; do
      local p=${k}_PORT
      echo "CLOUD_$p=${!p}"
    done
    echo "CLOUD_ADMIN_PASSWORD=$ADMIN_PASSWORD"
    echo "CLOUD_SERVICE_PASSWORD=$SERVICE_PASSWORD"
    echo "CLOUD_DEMO_PASSWORD=$DEMO_PASSWORD"
    echo "CLOUD_ALT_PASSWORD=$ALT_PASSWORD"
    echo "CLOUD_READER_PASSWORD=$READER_PASSWORD"
  } | while IFS='=' read -r k v; do printf '%s=%q\n' "$k" "$v"; done
}

cmd_json() {
  local py=$PYTHON
  [ -x "$BIN/python" ] && py=$BIN/python
  CC_DIR=$CLOUD_DIR CC_BIN=$BIN CC_AUTH_URL=$AUTH_URL CC_REGION=$REGION CC_IP=$IP \
  CC_RABBIT_URL=$(rabbit_url) CC_DB_URL=$(db_url '') CC_DB_PREFIX=$DB_PREFIX \
  CC_HOSTS="$COMPUTE_HOSTS" CC_SERVICES="$SERVICES" CC_CLIMATE_API_PORT=$CLIMATE_API_PORT \
  CC_CLIMATE_DB=climate_it${_instance:+_$_instance} \
  CC_PORTS="keystone=$KEYSTONE_PORT placement=$PLACEMENT_PORT nova=$NOVA_PORT glance=$GLANCE_PORT neutron=$NEUTRON_PORT cinder=$CINDER_PORT heat=$HEAT_PORT" \
  CC_USERS="admin=$(credentials admin) demo=$(credentials demo) alt=$(credentials alt) reader=$(credentials reader) climate=$(credentials climate)" \
  "$py" - <<'PY'
import json, os
E = os.environ
ip = E["CC_IP"]
ports = dict(p.split("=") for p in E["CC_PORTS"].split())
paths = {"nova": "/v2.1", "cinder": "/v3", "keystone": "/v3"}
users = {}
# CC_USERS holds "who=username password project" triples separated by spaces
tokens = E["CC_USERS"].split()
for i in range(0, len(tokens), 3):
    who, user = tokens[i].split("=", 1)
    users[who] = {"username": user, "password": tokens[i + 1], "project_name": tokens[i + 2],
                  "user_domain_name": "Default", "project_domain_name": "Default"}
print(json.dumps({
    "cloud_dir": E["CC_DIR"],
    "bin": E["CC_BIN"],
    "auth_url": E["CC_AUTH_URL"],
    "region": E["CC_REGION"],
    "rabbit_url": E["CC_RABBIT_URL"],
    "db_url_prefix": E["CC_DB_URL"].rsplit("/", 1)[0] + "/",
    "db_url_query": E["CC_DB_URL"].rsplit("/", 1)[1],
    "db_prefix": E["CC_DB_PREFIX"],
    "services": E["CC_SERVICES"].split(),
    "compute_hosts": E["CC_HOSTS"].split(),
    "image": "fake-image",
    "flavors": ["m1.tiny", "m1.small", "m1.medium"],
    "ports": {k: int(v) for k, v in ports.items()},
    "urls": {k: f"http://{ip}:{v}{paths.get(k, '')}" for k, v in ports.items()},
    "climate": {"port": int(E["CC_CLIMATE_API_PORT"]), "database": E["CC_CLIMATE_DB"],
                "url": f"http://{ip}:{E['CC_CLIMATE_API_PORT']}/v1",
                "service_type": "reservation"},
    "users": users,
}, indent=2, sort_keys=True))
PY
}

cmd_logs() {
  if [ $# -eq 0 ]; then ls -1 "$LOGS"/*.log 2>/dev/null; return 0; fi
  [ -f "$LOGS/$1.log" ] || die "no log $LOGS/$1.log"
  tail -n "${LINES_SHOWN:-60}" "$LOGS/$1.log"
}

# ----------------------------------------------------------------------------------------------
# purge, clean, up
# ----------------------------------------------------------------------------------------------
cmd_purge() {
  [ -f "$SETTINGS_FILE" ] || die "not configured: run '$0 up'"
  enabled keystone && running keystone || die "the cloud is not running: run '$0 up'"
  write_helper
  helper purge
}

cmd_clean() {
  cmd_stop
  local owner d vhost
  owner=$(db_owner)
  if [ -n "$owner" ] && [ "$owner" != "$CLOUD_DIR" ]; then
    say "WARNING: databases ${DB_PREFIX}* and vhost belong to the cloud in $owner: not dropped"
  elif sql -e 'SELECT 1' >/dev/null 2>&1; then
    for d in $(databases); do sql -e "DROP DATABASE IF EXISTS \`$DB_PREFIX$d\`"; done
    # and Climate's database of the integration tests against this cloud
    sql -e "DROP DATABASE IF EXISTS \`climate_it${_instance:+_$_instance}\`"
    sql -e "DROP DATABASE IF EXISTS \`${DB_PREFIX}harness\`"
    vhost=$(cat "$CLOUD_DIR/rabbit-vhost" 2>/dev/null || true)
    if [ -n "$vhost" ]; then
      rabbitmqctl -q delete_vhost "$vhost" >/dev/null 2>&1 || say "WARNING: vhost $vhost not deleted"
    fi
  else
    say "WARNING: database server unreachable: databases ${DB_PREFIX}* and vhost not dropped"
  fi
  rm -rf "$ETC" "$DATA" "$LOGS" "$RUN" "$LIB" "$SETTINGS_FILE" "$CLOUD_DIR/rabbit-vhost"
  say "clean: state removed (venv kept: $VENV)"
}

cmd_up() {
  local t0=$SECONDS
  cmd_install
  cmd_configure
  check_ports
  cmd_dbsync
  cmd_start
  say "up: cloud ready in $((SECONDS - t0)) s (auth $AUTH_URL; '$0 openrc' for credentials)"
}

# Commands that change the cloud run one at a time per cloud directory: a
# CI run starts the cloud in the background while other tests run, and
# the integration tests' own "up" then waits for it instead of racing it.
hold_cloud_lock() {
  mkdir -p "$CLOUD_DIR"
  exec 9>"$CLOUD_DIR/.lock"
  flock 9
}

main() {
  local cmd=${1:-help}
  [ $# -gt 0 ] && shift
  case $cmd in
    up|install|configure|dbsync|start|stop|restart|purge|clean) hold_cloud_lock ;;
  esac
  case $cmd in
    up) cmd_up ;;
    install) cmd_install ;;
    configure) cmd_install_needed; cmd_configure ;;
    dbsync) cmd_dbsync ;;
    start) cmd_start ;;
    stop) cmd_stop "$@" ;;
    restart) cmd_stop "$@"; cmd_start ;;
    status) cmd_status ;;
    purge) cmd_purge ;;
    clean) cmd_clean ;;
    openrc) cmd_openrc "$@" ;;
    env) cmd_env ;;
    json) cmd_json ;;
    logs) cmd_logs "$@" ;;
    help|-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (try '$0 help')" ;;
  esac
}
cmd_install_needed() { [ -x "$BIN/python" ] || cmd_install; }

# ----------------------------------------------------------------------------------------------
# install: one venv with every service, pinned by the constraints at the end of this file
# ----------------------------------------------------------------------------------------------
pip_quiet() { # pip's stderr without the noise of local extra indexes that do not exist
  "$BIN/pip" "$@" 2> >(grep -v -e 'is ignored: it is neither a file nor a directory' \
                              -e 'yanked' >&2)
}

cmd_install() {
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$PYTHON must be Python >= 3.11 (set PYTHON=...)"
  mkdir -p "$CLOUD_DIR"
  local constraints=$CLOUD_DIR/constraints.txt stamp=$VENV/.climate-cloud-stamp want t0=$SECONDS
  constraints > "$constraints"
  want=$({ cat "$constraints"; echo $PACKAGES; } | sha256sum | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    say "install: venv up to date ($VENV)"
    return 0
  fi
  [ -x "$BIN/python" ] || "$PYTHON" -m venv "$VENV"
  say "install: pip install into $VENV (a few minutes when cold)"
  pip_quiet install -q --disable-pip-version-check -c "$constraints" $PACKAGES \
    || die "pip install failed"
  patch_oslo_messaging
  echo "$want" > "$stamp"
  say "install: done in $((SECONDS - t0)) s, venv $(du -sh "$VENV" | cut -f1)"
}

# oslo.messaging 17.x polls for each RPC reply with time.sleep(0.5) (a workaround for
# lp-2035113): every nova-compute -> conductor call costs 0.5 s, a fake boot ~6 s. Poll at 10 ms.
patch_oslo_messaging() {
  local f
  f=$("$BIN/python" -c 'import oslo_messaging, os; print(os.path.dirname(oslo_messaging.__file__))')/_drivers/amqpdriver.py
  if grep -q '^                time.sleep(0.5)$' "$f"; then
    sed -i 's/^                time.sleep(0.5)$/                time.sleep(0.01)  # cloud-harness (was 0.5)/' "$f"
  fi
}

constraints() {
  cat <<'LOCK'
alembic==1.18.4
amqp==5.3.1
aniso8601==10.0.1
aodhclient==3.10.1
attrs==25.4.0
automaton==3.3.0
autopage==0.6.0
bcrypt==5.0.0
blinker==1.9.0
boto3==1.35.99
botocore==1.35.99
cachetools==7.0.1
castellan==5.6.0
certifi==2026.10.18
cffi==2.0.0
charset-normalizer==3.4.4
cinder==28.0.0
click==8.3.1
cliff==4.13.3
cmd2==3.2.0
cotyledon==2.2.0
croniter==6.0.0
cryptography==43.0.3
cursive==0.2.3
debtcollector==3.0.0
decorator==5.2.1
defusedxml==0.7.1
distro==1.9.0
dnspython==2.8.0
docker==7.1.0
dogpile.cache==1.5.0
elementpath==4.8.0
eventlet==0.40.4
fasteners==0.20
fixtures==4.3.1
Flask==3.1.3
Flask-RESTful==0.3.10
futurist==3.2.1
glance==32.0.0
glance_store==5.4.0
google-api-core==2.30.0
google-api-python-client==2.190.0
google-auth==2.48.0
google-auth-httplib2==0.3.0
googleapis-common-protos==1.72.0
greenlet==3.3.2
gunicorn==25.2.0
httplib2==0.31.2
idna==3.11
importlib_metadata==8.7.1
invoke==2.2.1
iso8601==2.1.0
itsdangerous==2.2.0
Jinja2==3.1.6
jmespath==1.1.0
jsonpatch==1.33
jsonpointer==3.0.0
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
jwcrypto==1.5.6
keystone==29.1.0
keystoneauth1==5.13.1
keystonemiddleware==12.0.0
kombu==5.6.2
lxml==6.0.2
Mako==1.3.10
markdown-it-py==4.0.0
MarkupSafe==3.0.3
mdurl==0.1.2
microversion_parse==2.1.0
msgpack==1.1.2
ncclient==0.7.0
netaddr==1.3.0
networkx==3.4.2
neutron==28.0.2
neutron-lib==3.24.0
nova==33.0.2
numpy==2.2.6
oauthlib==3.3.1
openstack-heat==26.0.2
openstack-placement==15.0.0
openstacksdk==4.10.0
os-brick==7.0.0
os-ken==4.1.2
os-resource-classes==1.1.0
os-service-types==1.8.2
os-traits==3.6.0
os_vif==4.3.0
osc-lib==4.4.0
osc-placement==4.8.0
oslo.cache==4.1.1
oslo.concurrency==7.4.1
oslo.config==10.3.0
oslo.context==6.3.0
oslo.db==18.0.0
oslo.i18n==6.7.2
oslo.limit==2.10.0
oslo.log==8.1.0
oslo.messaging==17.3.0
oslo.metrics==0.15.1
oslo.middleware==8.0.0
oslo.policy==5.0.0
oslo.privsep==3.10.1
oslo.reports==3.7.0
oslo.rootwrap==7.9.0
oslo.serialization==5.9.1
oslo.service==4.5.1
oslo.upgradecheck==2.7.1
oslo.utils==10.0.1
oslo.versionedobjects==3.9.0
oslo.vmware==4.9.0
osprofiler==4.3.0
ovs==3.7.0
ovsdbapp==2.16.1
packaging==26.0
paramiko==4.0.0
Paste==3.10.1
PasteDeploy==3.1.0
pbr==7.0.3
pecan==1.7.0
platformdirs==4.9.2
prettytable==3.17.0
prometheus_client==0.24.1
proto-plus==1.27.1
protobuf==6.33.5
psutil==7.2.2
pyasn1==0.6.0
pyasn1_modules==0.4.1
pycadf==4.0.1
pycparser==3.0
pydot==4.0.1
Pygments==2.19.2
PyJWT==2.11.0
PyMySQL==1.1.2
PyNaCl==1.6.2
pyOpenSSL==24.2.1
pyparsing==3.3.2
pyperclip==1.11.0
pyroute2==0.8.1
pysaml2==7.5.4
python-barbicanclient==7.3.0
python-blazarclient==4.5.0
python-cinderclient==9.9.0
python-dateutil==2.9.0.post0
python-designateclient==6.4.0
python-glanceclient==4.11.0
python-heatclient==5.1.0
python-ironicclient==6.0.0
python-keystoneclient==5.8.0
python-magnumclient==4.10.0
python-manilaclient==6.0.0
python-mistralclient==6.2.0
python-neutronclient==11.8.0
python-novaclient==18.12.0
python-octaviaclient==3.13.0
python-openstackclient==9.0.0
python-swiftclient==4.10.0
python-troveclient==8.10.0
python-vitrageclient==5.4.0
python-zaqarclient==4.4.0
python-zunclient==5.4.0
pytz==2025.2
pyudev==0.24.4
PyYAML==6.0.3
redis==7.2.0
referencing==0.37.0
repoze.lru==0.7
requests==2.32.5
requestsexceptions==1.4.0
retrying==1.4.2
rfc3986==2.0.0
rich==14.3.3
rich-argparse==1.7.2
Routes==2.5.1
rpds-py==0.30.0
rsa==4.9.1
rtslib-fb==2.2.3
s3transfer==0.10.4
setproctitle==1.3.7
simplegeneric==0.8.1
six==1.17.0
sortedcontainers==2.4.0
SQLAlchemy==2.0.46
statsd==4.0.1
stevedore==5.7.0
suds-community==1.2.0
tabulate==0.9.0
taskflow==6.2.0
tenacity==9.1.4
testresources==2.0.2
testscenarios==0.5.0
testtools==2.8.5
tooz==8.1.0
typing_extensions==4.15.0
tzdata==2025.3
uritemplate==4.2.0
urllib3==2.6.3
vine==5.1.0
voluptuous==0.16.0
warlock==2.1.0
wcwidth==0.6.0
WebOb==1.8.9
websocket-client==1.9.0
websockify==0.13.0
Werkzeug==3.1.6
wrapt==2.1.1
WSME==0.12.1
xmlschema==2.5.1
yappi==1.7.3
yaql==3.2.0
zipp==3.23.0
zstd==1.5.7.3
LOCK
}

main "$@"
