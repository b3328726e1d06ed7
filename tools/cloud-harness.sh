#!/usr/bin/env bash
# cloud-harness.sh - a real OpenStack control plane on 127.0.0.1 for Climate's integration tests.
# The harness is the Python package beside this file (tools/cloud_harness, standard library
# only); "tools/cloud-harness.sh help" lists its commands and settings.
exec "${CLOUD_HARNESS_PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/cloud_harness" "$@"
