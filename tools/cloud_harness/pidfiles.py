"""What the harness records of the processes it started, and how it reads it back.

Each service runs in a session of its own (its PID is its process group's and session's id).
$RUN/NAME.pid holds "PID STARTTIME" (field 22 of /proc/PID/stat), so that a recycled PID is
never taken for ours; $RUN/NAME.fp the fingerprint of the command and configuration it was
started with; $LOG/NAME.log gets a "--- DATE start: COMMAND" line before each start.

Standard library only: the CLI (system python3) and cloud_api (the cloud's venv) both use it.
"""
import os
import sys

#: What a start line of a service's log begins with and holds.
START_MARK, START_WORD = "--- ", " start: "


def parse_stat(text):
    """(state, session id, start time, RSS pages) of a /proc/PID/stat line."""
    # the command name (field 2) is in parentheses and may hold blanks or ')'
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[3]), fields[19], int(fields[21])


def read_stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return parse_stat(f.read())
    except (OSError, ValueError, IndexError):
        return None


def starttime(pid):
    """Field 22 of /proc/PID/stat (clock ticks after boot), or None when PID is gone."""
    stat = read_stat(pid)
    return stat[2] if stat else None


def format_record(pid, start):
    return f"{pid} {start}\n"


def parse_record(text):
    """(PID, STARTTIME) of a pid file's text, or None."""
    parts = text.split()
    if len(parts) != 2 or not parts[0].isdigit():
        return None
    return int(parts[0]), parts[1]


def read_record(run, name):
    try:
        with open(os.path.join(run, f"{name}.pid")) as f:
            return parse_record(f.read())
    except OSError:
        return None


def write_record(run, name, pid, start):
    path = os.path.join(run, f"{name}.pid")
    with open(path + ".tmp", "w") as f:
        f.write(format_record(pid, start))
    os.replace(path + ".tmp", path)


def matches(record, stat):
    """Whether the process whose /proc stat is STAT is the one RECORD names, alive (a zombie
    is not: the harness may not have reaped a child that died)."""
    return record is not None and stat is not None and stat[2] == record[1] and stat[0] != "Z"


def pid_of(run, name):
    """PID of NAME when it runs and is the process the harness started, else None."""
    record = read_record(run, name)
    if record is None:
        return None
    return record[0] if matches(record, read_stat(record[0])) else None


def alive(run, name):
    return pid_of(run, name) is not None


def recorded_names(run):
    """Names of every service with a pid file, sorted."""
    try:
        entries = os.listdir(run)
    except FileNotFoundError:
        return []
    return sorted(e[:-4] for e in entries if e.endswith(".pid"))


def started_at(run, name):
    """Seconds since the epoch at which NAME's recorded process started, or None."""
    record = read_record(run, name)
    if record is None:
        return None
    try:
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + int(record[1]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration):
        return None


def start_line(date, command):
    return f"{START_MARK}{date}{START_WORD}{command}\n"


def this_start(lines, count=40):
    """The last COUNT of LINES written since the latest start line."""
    starts = [i for i, line in enumerate(lines)
              if line.startswith(START_MARK) and START_WORD in line]
    return lines[starts[-1] if starts else 0:][-count:]


def log_tail(logs, name, count=40):
    """The last lines of NAME's log since its latest start, framed, or '' without a log."""
    path = os.path.join(logs, f"{name}.log")
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return ""
    tail = "".join(this_start(lines, count))
    if tail and not tail.endswith("\n"):
        tail += "\n"
    return f"--- last lines of {path} (this start) ---\n{tail}---\n"


def service_failed(logs, name, reason):
    """The harness's message for a service that did not start: exits 1."""
    sys.stderr.write(f"cloud-harness: SERVICE FAILED: {name}: {reason}\n"
                     f"{log_tail(logs, name)}")
    raise SystemExit(1)


def session_members(session):
    """(PID, RSS pages) of every live process of a session."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = read_stat(entry)
            if stat and stat[1] == session and stat[0] != "Z":
                members.append((int(entry), stat[3]))
    return members
