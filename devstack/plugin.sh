#!/bin/bash
# Climate's devstack plugin: installs Climate from $CLIMATE_DIR, writes
# $CLIMATE_CONF_FILE (MySQL or PostgreSQL, RabbitMQ, Keystone), registers the
# climate service user and the "reservation" endpoint, puts ClimateFilter in
# nova-scheduler, and runs climate-api (under uwsgi behind Apache at
# /reservation, or its own server) and climate-manager as devstack services.
# See doc/source/devstack.rst.
#
# devstack sources this file at each phase with the phase as arguments
# ("stack install", "stack post-config", "stack extra", "unstack",
# "clean").

_XTRACE_CLIMATE=$(set +o | grep xtrace)
set +o xtrace

CLIMATE_BIN_DIR=$(get_python_exec_prefix)


function install_climate {
    setup_develop "$CLIMATE_DIR"
}


# Horizon's enabled folder of this cloud's local settings.
function _climate_dashboard_enabled_dir {
    echo "$CLIMATE_HORIZON_DIR/openstack_dashboard/local/enabled"
}


# The dashboard extra into Climate's install, and Climate's panels into
# Horizon: links, so that a change to the checkout shows at Horizon's next
# start (devstack collects and compresses Horizon's static files after the
# plugins' install phase).
function install_climate_dashboard {
    setup_develop "$CLIMATE_DIR" dashboard
    local enabled
    enabled=$(_climate_dashboard_enabled_dir)
    mkdir -p "$enabled"
    ln -sf "$CLIMATE_DIR"/climate/dashboard/enabled/_6*.py "$enabled/"
}


function cleanup_climate_dashboard {
    local enabled
    enabled=$(_climate_dashboard_enabled_dir)
    local file
    for file in "$CLIMATE_DIR"/climate/dashboard/enabled/_6*.py; do
        rm -f "$enabled/$(basename "$file")"
    done
}


# Where clients reach the API (the catalog entry without its /v1).
function _climate_api_url {
    if [[ "$CLIMATE_USE_UWSGI" == "True" ]]; then
        echo "$CLIMATE_SERVICE_PROTOCOL://$CLIMATE_SERVICE_HOST$CLIMATE_URL_PATH"
    else
        echo "$CLIMATE_SERVICE_PROTOCOL://$CLIMATE_SERVICE_HOST:$CLIMATE_SERVICE_PORT"
    fi
}


# The directory nova-scheduler must import climate_filter from.  The filter
# is a top-level module so that neither the climate package nor Climate's
# dependencies enter Nova's process (doc/source/nova-filter.rst); a .pth
# file in the site-packages Nova runs from puts it on the path.
function _climate_filter_pth {
    local site_packages
    site_packages=$($PYTHON -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$site_packages/climate_filter.pth"
}


function configure_climate {
    sudo install -d -o "$STACK_USER" "$CLIMATE_CONF_DIR" "$CLIMATE_STATE_PATH"
    rm -f "$CLIMATE_CONF_FILE"

    iniset "$CLIMATE_CONF_FILE" DEFAULT host "$(ipv6_unquote "$CLIMATE_SERVICE_LISTEN_ADDRESS")"
    iniset "$CLIMATE_CONF_FILE" DEFAULT port "$CLIMATE_SERVICE_PORT"
    iniset "$CLIMATE_CONF_FILE" DEFAULT state_path "$CLIMATE_STATE_PATH"
    iniset "$CLIMATE_CONF_FILE" DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    # the manager reads it too (it decides how trusts are made)
    iniset "$CLIMATE_CONF_FILE" DEFAULT auth_strategy keystone
    iniset "$CLIMATE_CONF_FILE" api threads "$CLIMATE_API_THREADS"
    setup_logging "$CLIMATE_CONF_FILE"

    iniset "$CLIMATE_CONF_FILE" database connection "$(database_connection_url climate)"
    iniset_rpc_backend climate "$CLIMATE_CONF_FILE"
    if [[ -n "$CLIMATE_NOTIFICATION_DRIVER" ]]; then
        iniset "$CLIMATE_CONF_FILE" oslo_messaging_notifications driver "$CLIMATE_NOTIFICATION_DRIVER"
    fi

    # Tokens of API calls are validated as the climate user; Nova, Keystone
    # trusts and Glance are called as the same user ([service_auth]).
    configure_keystone_authtoken_middleware "$CLIMATE_CONF_FILE" "$CLIMATE_USER_NAME"
    iniset "$CLIMATE_CONF_FILE" keystone_authtoken service_token_roles_required True
    iniset "$CLIMATE_CONF_FILE" service_auth auth_type password
    iniset "$CLIMATE_CONF_FILE" service_auth auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$CLIMATE_CONF_FILE" service_auth username "$CLIMATE_USER_NAME"
    iniset "$CLIMATE_CONF_FILE" service_auth password "$SERVICE_PASSWORD"
    iniset "$CLIMATE_CONF_FILE" service_auth project_name "$SERVICE_PROJECT_NAME"
    iniset "$CLIMATE_CONF_FILE" service_auth user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$CLIMATE_CONF_FILE" service_auth project_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$CLIMATE_CONF_FILE" nova region_name "$REGION_NAME"

    iniset "$CLIMATE_CONF_FILE" manager plugins "$CLIMATE_PLUGINS"
    iniset "$CLIMATE_CONF_FILE" hosts inventory "$CLIMATE_HOSTS_INVENTORY"
    iniset "$CLIMATE_CONF_FILE" hosts aggregate_freepool_name "$CLIMATE_FREEPOOL_NAME"
    iniset "$CLIMATE_CONF_FILE" hosts freepool_accepts_unreserved "$CLIMATE_FREEPOOL_ACCEPTS_UNRESERVED"

    if [[ "$CLIMATE_USE_UWSGI" == "True" ]]; then
        # Apache proxies $CLIMATE_URL_PATH to uwsgi's socket and passes the
        # path as SCRIPT_NAME, so the links Climate answers with carry it
        write_uwsgi_config "$CLIMATE_UWSGI_CONF" "$CLIMATE_UWSGI" "$CLIMATE_URL_PATH" "" climate-api
        # climate.wsgi.api reads its configuration from here
        iniset "$CLIMATE_UWSGI_CONF" uwsgi env "OS_CLIMATE_CONFIG_FILES=$CLIMATE_CONF_FILE"
        # TLS ends at Apache: the scheme clients used comes as a header
        iniset "$CLIMATE_CONF_FILE" oslo_middleware enable_proxy_headers_parsing True
    fi
}


# nova.conf of nova-scheduler: ClimateFilter available and enabled, with
# the same freepool settings as Climate.  Runs at post-config, before Nova
# starts.
function configure_climate_nova_filter {
    echo "$CLIMATE_DIR/climate/nova_filter" | sudo tee "$(_climate_filter_pth)" >/dev/null

    # available_filters has one line per value, other plugins' among them:
    # iniset would overwrite every line, iniadd would repeat ours on a
    # second stack.sh
    local available
    available=$(iniget_multiline "$NOVA_CONF" filter_scheduler available_filters)
    # unset in nova.conf means Nova's default: all of Nova's filters
    available=${available:-nova.scheduler.filters.all_filters}
    if [[ " $available " != *" climate_filter.ClimateFilter "* ]]; then
        # shellcheck disable=SC2086 # one argument per value
        iniset_multiline "$NOVA_CONF" filter_scheduler available_filters \
            $available climate_filter.ClimateFilter
    fi
    local enabled
    enabled=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
    # unset in nova.conf means Nova's default list, which must be kept
    enabled=${enabled:-${FILTERS:-ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter}}
    if [[ ",$enabled," != *",ClimateFilter,"* ]]; then
        iniset "$NOVA_CONF" filter_scheduler enabled_filters "$enabled,ClimateFilter"
    fi
    iniset "$NOVA_CONF" climate freepool_accepts_unreserved "$CLIMATE_FREEPOOL_ACCEPTS_UNRESERVED"
    iniset "$NOVA_CONF" climate aggregate_freepool_name "$CLIMATE_FREEPOOL_NAME"
}


# The climate user: admin in the service project for Nova's aggregates and
# hypervisors and for trusts, service for keystonemiddleware's
# service-token check.  The catalog entry ends in /v1, as clients expect.
function create_climate_accounts {
    create_service_user "$CLIMATE_USER_NAME" admin
    get_or_add_user_project_role service "$CLIMATE_USER_NAME" "$SERVICE_PROJECT_NAME" \
        "$SERVICE_DOMAIN_NAME" "$SERVICE_DOMAIN_NAME"
    get_or_create_service climate "$CLIMATE_SERVICE_TYPE" "Resource reservation"
    get_or_create_endpoint "$CLIMATE_SERVICE_TYPE" "$REGION_NAME" "$(_climate_api_url)/v1"
}


function init_climate {
    recreate_database climate
    "$CLIMATE_BIN_DIR/climate-db-manage" --config-file "$CLIMATE_CONF_FILE" upgrade head
}


function start_climate {
    if [[ "$CLIMATE_USE_UWSGI" == "True" ]]; then
        run_process climate-api "$(which uwsgi) --procname-prefix climate-api --ini $CLIMATE_UWSGI_CONF"
    else
        run_process climate-api "$CLIMATE_BIN_DIR/climate-api --config-file $CLIMATE_CONF_FILE"
    fi
    run_process climate-manager "$CLIMATE_BIN_DIR/climate-manager --config-file $CLIMATE_CONF_FILE"
    if is_service_enabled climate-api; then
        local url
        url=$(_climate_api_url)/healthcheck
        if ! wait_for_service "$SERVICE_TIMEOUT" "$url"; then
            die $LINENO "climate-api did not answer at $url"
        fi
    fi
    # 1 is a warning (e.g. a database without SKIP LOCKED), 2 a failure
    local rc=0
    "$CLIMATE_BIN_DIR/climate-status" --config-file "$CLIMATE_CONF_FILE" upgrade check || rc=$?
    if (( rc >= 2 )); then
        die $LINENO "climate-status upgrade check failed"
    fi
}


function stop_climate {
    stop_process climate-api
    stop_process climate-manager
}


function cleanup_climate {
    if [[ "$CLIMATE_USE_UWSGI" == "True" ]]; then
        remove_uwsgi_config "$CLIMATE_UWSGI_CONF" climate-api
    fi
    sudo rm -f "$(_climate_filter_pth)"
    sudo rm -rf "$CLIMATE_CONF_DIR" "$CLIMATE_STATE_PATH"
}


if is_service_enabled climate-api climate-manager; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing Climate"
        install_climate
        if [[ "$CLIMATE_DASHBOARD" == "True" ]]; then
            echo_summary "Installing Climate's Horizon plugin"
            install_climate_dashboard
        fi
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring Climate"
        configure_climate
        create_climate_accounts
        if [[ "$CLIMATE_NOVA_FILTER" == "True" ]]; then
            configure_climate_nova_filter
        fi
        init_climate
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Starting Climate"
        start_climate
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_climate
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_climate
        if [[ "$CLIMATE_DASHBOARD" == "True" ]]; then
            cleanup_climate_dashboard
        fi
    fi
fi

$_XTRACE_CLIMATE
