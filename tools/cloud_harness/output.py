"""The harness's messages: one line each on stderr, with the time."""
import sys
import time


def say(message):
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} cloud-harness: {message}\n")
    sys.stderr.flush()


def die(message):
    """Say what is wrong, exit 1."""
    say(f"ERROR: {message}")
    raise SystemExit(1)
