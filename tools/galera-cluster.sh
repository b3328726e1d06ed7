#!/usr/bin/env bash
# galera-cluster.sh - a 3-node MariaDB Galera cluster on 127.0.0.1 for Climate's functional tests.
#
# Runs three mariadbd processes (nodes 1, 2, 3) of one Galera cluster ("climate_galera") on
# loopback, each with its own generated my.cnf (--defaults-file: nothing of /etc/mysql is read),
# data directory, socket, pid file and error log under the state directory. Root may log in
# over TCP from 127.0.0.1 without a password and with all privileges on every node
# (mysql+pymysql://root@127.0.0.1:4306/db). State transfers use rsync (wsrep_sst_method=rsync).
#
# Usage: tools/galera-cluster.sh COMMAND [N]
#   up        start the nodes that are not running and wait until all three report
#             wsrep_cluster_size=3, wsrep_local_state_comment=Synced and wsrep_ready=ON; quick
#             when the cluster is already up. When no node runs, one node bootstraps the
#             cluster (--wsrep-new-cluster) and the two others join it:
#               - fresh state directory: node 1's data directory is created with
#                 mariadb-install-db and node 1 bootstraps; nodes 2 and 3 start empty and
#                 receive node 1's data by SST;
#               - after a clean "down": the node whose grastate.dat says safe_to_bootstrap: 1
#                 (the last one stopped, node 1 since "down" stops 3, 2 then 1);
#               - after a crash or "kill" of every node (no safe_to_bootstrap: 1): the position
#                 of each node is recovered (mariadbd --wsrep-recover), the most advanced node
#                 (the lowest-numbered one among equals) gets safe_to_bootstrap: 1 and
#                 bootstraps, the others join from their recovered positions.
#   down      stop the nodes this script started, by the PIDs in its pid files (3, 2, then 1;
#             TERM, then KILL after CLIMATE_GALERA_STOP_TIMEOUT seconds); nothing else
#   status    per node: SQL port, pid, alive, wsrep_cluster_size, wsrep_local_state_comment,
#             wsrep_ready; exit 1 unless all three nodes are alive and Synced
#   kill N    kill -9 node N (by its pid file; also the SST helpers it may have running)
#   start N   start node N alone and wait until it has rejoined the running cluster (IST when
#             the donor's gcache still holds what it missed, SST otherwise) and is Synced
#   logs [N]  list the error logs, or print the tail of node N's
#   reset     wipe the state directory (refused while a node runs: "down" first)
#
# Settings (environment):
#   CLIMATE_GALERA_DIR          state directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/climate-galera;
#                               when run as root and the nodes' user cannot reach it, as with a
#                               mode 0700 /root, /var/tmp/climate-galera-$(id -u) instead)
#   CLIMATE_GALERA_PORTS        SQL ports of nodes 1-3 (default "4306 4307 4308")
#   CLIMATE_GALERA_GCOMM_PORTS  Galera replication ports (default "4567 4577 4587"); the IST port of
#                               each node is its replication port + 1 (4568 4578 4588)
#   CLIMATE_GALERA_SST_PORTS    rsync SST ports (default "4444 4454 4464")
#   CLIMATE_GALERA_PROVIDER_OPTIONS  appended to wsrep_provider_options of a node at its next
#                               start; e.g. a quicker eviction of a killed node than Galera's
#                               defaults (suspect 5 s, inactive 15 s):
#                               "evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S"
#                               (keepalive_period must stay below a third of suspect_timeout)
#   CLIMATE_GALERA_USER         the user mariadbd runs as when started by root (default mysql);
#                               ignored otherwise (the nodes run as the caller)
#   CLIMATE_GALERA_TIMEOUT      seconds a node may take to start and become Synced (default 120)
#   CLIMATE_GALERA_STOP_TIMEOUT seconds a node may take to stop after TERM (default 60)
#   CLIMATE_GALERA_MARIADBD     the server binary (default: mariadbd on PATH, else /usr/sbin/mariadbd)
#   CLIMATE_GALERA_PROVIDER     the Galera library (default /usr/lib/galera/libgalera_smm.so)
#
# Every address is 127.0.0.1. Needs: mariadbd, mariadb-install-db, the mariadb client, the
# galera-4 library, rsync and one of ss/lsof (both used by the server's wsrep_sst_rsync script),
# flock.
# Exit status: 0 on success; 1 with the tail of the failing node's error log when a node does
# not come up; 2 on a usage or environment error.
set -euo pipefail
umask 022

die() { echo "galera-cluster: $*" >&2; exit 2; }

read -r -a PORTS <<<"${CLIMATE_GALERA_PORTS:-4306 4307 4308}"
read -r -a GCOMM_PORTS <<<"${CLIMATE_GALERA_GCOMM_PORTS:-4567 4577 4587}"
read -r -a SST_PORTS <<<"${CLIMATE_GALERA_SST_PORTS:-4444 4454 4464}"
for v in PORTS GCOMM_PORTS SST_PORTS; do
    declare -n arr=$v
    [ "${#arr[@]}" -eq 3 ] || die "CLIMATE_GALERA_$v needs three ports, one per node"
    for p in "${arr[@]}"; do [[ $p =~ ^[0-9]+$ ]] || die "CLIMATE_GALERA_$v: not a port: $p"; done
    unset -n arr
done
NODES=(1 2 3)
TIMEOUT=${CLIMATE_GALERA_TIMEOUT:-120}
STOP_TIMEOUT=${CLIMATE_GALERA_STOP_TIMEOUT:-60}
MARIADBD=${CLIMATE_GALERA_MARIADBD:-$(command -v mariadbd || echo /usr/sbin/mariadbd)}
PROVIDER=${CLIMATE_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
EXTRA_PROVIDER_OPTIONS=${CLIMATE_GALERA_PROVIDER_OPTIONS:-}
CLUSTER_NAME=climate_galera
CLUSTER_ADDRESS=gcomm://$(printf '127.0.0.1:%s,' "${GCOMM_PORTS[@]}")
CLUSTER_ADDRESS=${CLUSTER_ADDRESS%,}

if [ "$(id -u)" -eq 0 ]; then
    RUN_USER=${CLIMATE_GALERA_USER:-mysql}
    id -u "$RUN_USER" >/dev/null 2>&1 || die "no user '$RUN_USER' to run mariadbd as (CLIMATE_GALERA_USER)"
else
    RUN_USER=$(id -un)
fi

# can the nodes' user reach (search) the directory $1, or its nearest existing parent?
reachable() {
    local p=$1
    while [ ! -e "$p" ]; do p=$(dirname "$p"); done
    [ "$RUN_USER" = "$(id -un)" ] && return 0
    runuser -u "$RUN_USER" -- test -x "$p" -a -d "$p"
}

if [ -n "${CLIMATE_GALERA_DIR:-}" ]; then
    DIR=$CLIMATE_GALERA_DIR
    reachable "$DIR" || die "user $RUN_USER cannot reach CLIMATE_GALERA_DIR=$DIR (a parent is not searchable)"
else
    DIR=${XDG_CACHE_HOME:-$HOME/.cache}/climate-galera
    reachable "$DIR" || DIR=/var/tmp/climate-galera-$(id -u)
fi
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
MARKER=$DIR/.climate-galera

node_dir() { echo "$DIR/node$1"; }
pid_file() { echo "$DIR/node$1/node.pid"; }
cnf_file() { echo "$DIR/node$1/my.cnf"; }
log_file() { echo "$DIR/node$1/error.log"; }
data_dir() { echo "$DIR/node$1/data"; }

now_ms() { local t=${EPOCHREALTIME//[.,]/}; echo $((t / 1000)); }
secs() { local ms=$(($(now_ms) - $1)); printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }

check_node_arg() {
    [[ ${1:-} =~ ^[123]$ ]] || die "node number 1, 2 or 3 expected, got '${1:-}'"
}

check_tools() {
    [ -x "$MARIADBD" ] || die "mariadbd not found ($MARIADBD): install mariadb-server"
    [ -r "$PROVIDER" ] || die "Galera library not found ($PROVIDER): install galera-4"
    command -v mariadb-install-db >/dev/null || die "mariadb-install-db not found: install mariadb-server"
    command -v mariadb >/dev/null || die "the mariadb client not found: install mariadb-client"
    command -v rsync >/dev/null ||
        die "rsync not found on PATH: the nodes' state transfers (wsrep_sst_method=rsync) need it; install rsync"
    command -v ss >/dev/null || command -v lsof >/dev/null ||
        die "neither ss nor lsof found: wsrep_sst_rsync needs one of them; install iproute2"
    command -v flock >/dev/null || die "flock not found: install util-linux"
}

# pid of node $1 when it is running (the pid in its pid file is a mariadbd of that node's
# my.cnf), else nothing and status 1
node_pid() {
    local f pid
    f=$(pid_file "$1")
    [ -s "$f" ] || return 1
    read -r pid <"$f" || true
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "--defaults-file=$(cnf_file "$1")" || return 1
    # a zombie (exited, not yet reaped) has no cmdline, but be explicit
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
    echo "$pid"
}

alive() { node_pid "$1" >/dev/null; }

descendants() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null || true); do
        echo "$c"
        descendants "$c"
    done
}

sql() {
    local n=$1
    shift
    mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"${PORTS[n - 1]}" -uroot \
        --connect-timeout=2 -N -B -e "$@" 2>/dev/null
}

# "size state ready" of node $1, or nothing when it does not answer
wsrep_state() {
    local out
    out=$(sql "$1" "SHOW GLOBAL STATUS WHERE Variable_name IN
        ('wsrep_cluster_size','wsrep_local_state_comment','wsrep_ready')") || return 1
    awk '{v[$1]=$2} END {print v["wsrep_cluster_size"], v["wsrep_local_state_comment"], v["wsrep_ready"]}' <<<"$out"
}

port_busy() {
    if command -v ss >/dev/null; then
        [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
    else
        lsof -nP -iTCP:"$1" -sTCP:LISTEN >/dev/null 2>&1
    fi
}

show_log() {
    local f
    f=$(log_file "$1")
    echo "--- last 40 lines of $f ---" >&2
    tail -n 40 "$f" >&2 2>/dev/null || echo "(no log)" >&2
}

fail_node() {
    echo "galera-cluster: node$1: $2" >&2
    show_log "$1"
    exit 1
}

ensure_dir() {
    if [ ! -d "$DIR" ]; then
        mkdir -p "$DIR"
        : >"$MARKER"
    fi
    [ -e "$MARKER" ] || [ -z "$(ls -A "$DIR")" ] ||
        die "$DIR exists and is not a climate-galera state directory"
    : >"$MARKER"
    local n
    for n in "${NODES[@]}"; do mkdir -p "$(data_dir "$n")"; done
    if [ "$RUN_USER" != "$(id -un)" ]; then
        chown "$RUN_USER:" "$DIR" "$MARKER"
        for n in "${NODES[@]}"; do chown "$RUN_USER:" "$(node_dir "$n")" "$(data_dir "$n")"; done
    fi
}

lock() {
    exec 9>"$DIR/.lock"
    flock -w "$((TIMEOUT * 4))" 9 || die "another galera-cluster.sh holds $DIR/.lock"
}

write_cnf() {
    local n=$1 d
    d=$(node_dir "$n")
    {
        echo "# generated by tools/galera-cluster.sh; rewritten at every start of node$n"
        echo "[mysqld]"
        [ "$(id -u)" -eq 0 ] && echo "user = $RUN_USER"
        cat <<EOF
datadir = $d/data
socket = $d/mariadbd.sock
pid-file = $d/mariadbd.pid
log-error = $d/error.log
port = ${PORTS[n - 1]}
bind-address = 127.0.0.1
skip-name-resolve
performance_schema = OFF
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
default_storage_engine = InnoDB
innodb_buffer_pool_size = 32M
innodb_log_file_size = 16M
innodb_log_buffer_size = 4M
innodb_flush_log_at_trx_commit = 2
innodb_autoinc_lock_mode = 2
key_buffer_size = 4M
aria_pagecache_buffer_size = 8M
binlog_format = ROW
wsrep_on = ON
wsrep_provider = $PROVIDER
wsrep_cluster_name = $CLUSTER_NAME
wsrep_cluster_address = $CLUSTER_ADDRESS
wsrep_node_name = node$n
wsrep_node_address = 127.0.0.1:${GCOMM_PORTS[n - 1]}
wsrep_node_incoming_address = 127.0.0.1:${PORTS[n - 1]}
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:${GCOMM_PORTS[n - 1]};ist.recv_addr=127.0.0.1:$((GCOMM_PORTS[n - 1] + 1));gcache.size=64M${EXTRA_PROVIDER_OPTIONS:+;$EXTRA_PROVIDER_OPTIONS}"
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:${SST_PORTS[n - 1]}
EOF
    } >"$(cnf_file "$n")"
}

# the fresh data directory of node $1 (system tables; root without password from anywhere
# local: root@localhost, root@127.0.0.1, root@::1)
install_db() {
    local n=$1 d
    d=$(data_dir "$n")
    if ! mariadb-install-db --no-defaults --user="$RUN_USER" --datadir="$d" \
        --auth-root-authentication-method=normal --skip-test-db \
        --innodb-log-file-size=16M >"$(node_dir "$n")/install.log" 2>&1; then
        echo "galera-cluster: mariadb-install-db failed for node$n:" >&2
        tail -n 30 "$(node_dir "$n")/install.log" >&2
        exit 1
    fi
    [ "$RUN_USER" = "$(id -un)" ] || chown -R "$RUN_USER:" "$d"
}

initialized() { [ -d "$(data_dir "$1")/mysql" ]; }

grastate() { # $1 node, $2 key (uuid, seqno, safe_to_bootstrap)
    local f
    f=$(data_dir "$1")/grastate.dat
    [ -r "$f" ] || return 1
    awk -v k="$2:" '$1 == k {print $2}' "$f"
}

# "uuid:seqno" of node $1 from its storage (mariadbd --wsrep-recover), for a node that did not
# stop cleanly (seqno -1 in grastate.dat)
recover_position() {
    local n=$1 log
    log=$(node_dir "$n")/recover.log
    write_cnf "$n"
    "$MARIADBD" --defaults-file="$(cnf_file "$n")" --wsrep-recover --disable-log-error \
        </dev/null >"$log" 2>&1 9>&- || {
        echo "galera-cluster: node$n: position recovery failed:" >&2
        tail -n 30 "$log" >&2
        exit 1
    }
    grep -a 'WSREP: Recovered position:' "$log" | tail -n 1 | sed 's/.*Recovered position: *//'
}

# the position to start node $1 from: nothing when grastate.dat knows it, else the recovered one
start_position() {
    local n=$1
    initialized "$n" || return 0
    [ "$(grastate "$n" seqno || true)" = "-1" ] || return 0
    recover_position "$n"
}

start_node() { # $1 node, $2 "bootstrap" or "join", $3 start position (may be empty)
    local n=$1 mode=$2 pos=${3:-} p args
    for p in "${PORTS[n - 1]}" "${GCOMM_PORTS[n - 1]}" "$((GCOMM_PORTS[n - 1] + 1))" "${SST_PORTS[n - 1]}"; do
        if port_busy "$p"; then
            echo "galera-cluster: node$n: port $p on 127.0.0.1 is already in use by another process" >&2
            exit 1
        fi
    done
    write_cnf "$n"
    # A joiner forgets the primary component it saved (gvwstate.dat, left behind by a kill):
    # restoring it only serves a restart of a whole crashed cluster, and makes a node killed
    # moments ago take 17-22 s instead of 6-10 s to rejoin the running cluster.
    [ "$mode" = bootstrap ] || rm -f "$(data_dir "$n")/gvwstate.dat"
    args=(--defaults-file="$(cnf_file "$n")")
    [ "$mode" = bootstrap ] && args+=(--wsrep-new-cluster)
    [ -n "$pos" ] && args+=(--wsrep-start-position="$pos")
    # its own session: Ctrl-C on a test run does not reach the nodes
    # (without the lock's descriptor, which would otherwise stay held as long as the node runs)
    setsid "$MARIADBD" "${args[@]}" </dev/null >>"$(node_dir "$n")/console.log" 2>&1 9>&- &
    echo $! >"$(pid_file "$n")"
}

# wait until node $1 is Synced and ready (and, with $2, in a cluster of $2 nodes)
wait_synced() {
    local n=$1 size=${2:-} deadline st
    deadline=$(($(now_ms) + TIMEOUT * 1000))
    while :; do
        alive "$n" || fail_node "$n" "mariadbd exited"
        if st=$(wsrep_state "$n"); then
            read -r s state ready <<<"$st"
            if [ "$state" = Synced ] && [ "$ready" = ON ] && { [ -z "$size" ] || [ "$s" = "$size" ]; }; then
                return 0
            fi
        fi
        [ "$(now_ms)" -lt "$deadline" ] ||
            fail_node "$n" "not Synced${size:+ in a cluster of $size} within ${TIMEOUT}s (last state: ${st:-no answer on port ${PORTS[n - 1]}})"
        sleep 0.2
    done
}

# how node $1 got its state in the log written since byte $2
transfer_of() {
    local f
    f=$(log_file "$1")
    # (an IST also runs the SST script, which logs "rsync IST completed on joiner")
    if tail -c +"$(($2 + 1))" "$f" 2>/dev/null | grep -aqE 'SST completed on joiner'; then
        echo SST
    elif tail -c +"$(($2 + 1))" "$f" 2>/dev/null | grep -aqE 'IST completed on joiner|Receiving IST'; then
        echo IST
    else
        echo "none needed"
    fi
}

node_line() { # $1 node, $2 note
    local n=$1 pid st
    pid=$(node_pid "$n" || echo -)
    st=$(wsrep_state "$n" || echo "? ? ?")
    read -r s state ready <<<"$st"
    printf 'node%s 127.0.0.1:%s pid %s size=%s state=%s ready=%s%s\n' \
        "$n" "${PORTS[n - 1]}" "$pid" "$s" "$state" "$ready" "${2:+ ($2)}"
}

log_size() { stat -c %s "$(log_file "$1")" 2>/dev/null || echo 0; }

cmd_up() {
    check_tools
    ensure_dir
    lock
    local t0 n boot="" any=0 pos notes=() t offs
    declare -A start_pos=()
    t0=$(now_ms)
    for n in "${NODES[@]}"; do alive "$n" && any=1; done
    if [ "$any" -eq 0 ]; then
        if ! initialized 1 && ! initialized 2 && ! initialized 3; then
            install_db 1
            boot=1
        else
            for n in "${NODES[@]}"; do
                if initialized "$n" && [ "$(grastate "$n" safe_to_bootstrap || true)" = 1 ]; then
                    boot=$n
                    break
                fi
            done
            if [ -z "$boot" ]; then
                # no clean last node: bootstrap the most advanced one
                local best=-2 seq
                for n in "${NODES[@]}"; do
                    initialized "$n" || continue
                    seq=$(grastate "$n" seqno || echo -1)
                    if [ "$seq" = -1 ]; then
                        pos=$(recover_position "$n")
                        start_pos[$n]=$pos
                        seq=${pos##*:}
                    fi
                    [[ $seq =~ ^-?[0-9]+$ ]] || seq=-1
                    if [ "$seq" -gt "$best" ]; then best=$seq; boot=$n; fi
                done
                [ -n "$boot" ] || die "no initialized data directory to bootstrap from; try reset"
                sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 1/' "$(data_dir "$boot")/grastate.dat"
            fi
        fi
        t=$(now_ms)
        start_node "$boot" bootstrap "${start_pos[$boot]:-}"
        wait_synced "$boot"
        notes[boot]="bootstrapped the cluster, $(secs "$t")"
    fi
    # the others join one after the other (joining together, they spend seconds agreeing on
    # the membership, and a donor serves one SST at a time)
    for n in "${NODES[@]}"; do
        alive "$n" && continue
        t=$(now_ms)
        offs=$(log_size "$n")
        if [ -z "${start_pos[$n]+x}" ]; then
            pos=$(start_position "$n")
            start_pos[$n]=$pos
        fi
        start_node "$n" join "${start_pos[$n]}"
        wait_synced "$n"
        notes[n]="joined, transfer: $(transfer_of "$n" "$offs"), $(secs "$t")"
    done
    for n in "${NODES[@]}"; do wait_synced "$n" 3; done
    for n in "${NODES[@]}"; do node_line "$n" "${notes[n]:-already running}"; done
    echo "galera cluster up in $(secs "$t0") (state directory $DIR)"
}

wait_gone() { # after a KILL: at most 10 s
    local i
    for i in $(seq 200); do
        alive "$1" || return 0
        sleep 0.05
    done
    die "node$1 (pid $(node_pid "$1")) still alive 10 s after kill -9"
}

stop_node() {
    local n=$1 pid t deadline kids
    pid=$(node_pid "$n") || { rm -f "$(pid_file "$n")"; echo "node$n not running"; return 0; }
    t=$(now_ms)
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$(($(now_ms) + STOP_TIMEOUT * 1000))
    while alive "$n" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.2; done
    if alive "$n"; then
        kids=$(descendants "$pid")
        kill -KILL "$pid" $kids 2>/dev/null || true
        wait_gone "$n"
        echo "node$n (pid $pid) did not stop within ${STOP_TIMEOUT}s: killed"
    else
        echo "node$n (pid $pid) stopped in $(secs "$t")"
    fi
    rm -f "$(pid_file "$n")"
}

cmd_down() {
    [ -d "$DIR" ] || { echo "no state directory $DIR: nothing to stop"; return 0; }
    lock
    local t0 n
    t0=$(now_ms)
    for n in 3 2 1; do stop_node "$n"; done
    echo "galera cluster down in $(secs "$t0")"
}

cmd_status() {
    local n pid st rc=0
    printf '%-6s %-6s %-8s %-6s %-5s %-14s %s\n' node port pid alive size state ready
    for n in "${NODES[@]}"; do
        if pid=$(node_pid "$n"); then
            st=$(wsrep_state "$n" || echo "- no-answer -")
            read -r s state ready <<<"$st"
            printf '%-6s %-6s %-8s %-6s %-5s %-14s %s\n' "node$n" "${PORTS[n - 1]}" "$pid" yes "$s" "$state" "$ready"
            [ "$state" = Synced ] || rc=1
        else
            printf '%-6s %-6s %-8s %-6s %-5s %-14s %s\n' "node$n" "${PORTS[n - 1]}" - no - - -
            rc=1
        fi
    done
    echo "state directory: $DIR"
    return $rc
}

cmd_kill() {
    check_node_arg "${1:-}"
    local n=$1 pid kids
    [ -d "$DIR" ] || die "no state directory $DIR"
    lock
    pid=$(node_pid "$n") || { rm -f "$(pid_file "$n")"; echo "node$n not running"; return 0; }
    kids=$(descendants "$pid")
    kill -KILL "$pid" $kids 2>/dev/null || true
    wait_gone "$n"
    rm -f "$(pid_file "$n")"
    echo "node$n (pid $pid) killed"
}

cmd_start() {
    check_node_arg "${1:-}"
    check_tools
    ensure_dir
    lock
    local n=$1 m other=0 t offs pos
    t=$(now_ms)
    if alive "$n"; then
        wait_synced "$n"
        node_line "$n" "already running"
        return 0
    fi
    for m in "${NODES[@]}"; do [ "$m" = "$n" ] || ! alive "$m" || other=1; done
    [ "$other" -eq 1 ] || die "no other node of the cluster is running: use 'up'"
    offs=$(log_size "$n")
    pos=$(start_position "$n")
    start_node "$n" join "$pos"
    wait_synced "$n"
    node_line "$n" "joined, transfer: $(transfer_of "$n" "$offs"), $(secs "$t")"
}

cmd_logs() {
    if [ -z "${1:-}" ]; then
        local n
        for n in "${NODES[@]}"; do echo "$(log_file "$n")"; done
    else
        check_node_arg "$1"
        tail -n 60 "$(log_file "$1")"
    fi
}

cmd_reset() {
    [ -d "$DIR" ] || { echo "no state directory $DIR"; return 0; }
    [ -e "$MARKER" ] || die "$DIR is not a climate-galera state directory; not removing it"
    lock
    local n
    for n in "${NODES[@]}"; do
        ! alive "$n" || die "node$n is running: run 'down' first"
    done
    rm -rf -- "$DIR"
    echo "removed $DIR"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
kill) cmd_kill "${2:-}" ;;
start) cmd_start "${2:-}" ;;
logs) cmd_logs "${2:-}" ;;
reset) cmd_reset ;;
*)
    sed -n '/^# Usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
