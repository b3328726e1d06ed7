#!/usr/bin/env bash
# Debian's Chromium and its WebDriver, which the dashboard's browser tests
# (climate/tests/integration/test_dashboard_browser.py) drive headless.
#
#   tools/browser.sh install   install chromium and chromium-driver from
#                              Debian's packages unless both are there
#                              (apt-get update only when the install fails)
#   tools/browser.sh check     exit 0 when both are installed
set -euo pipefail

missing() { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }

case "${1:-install}" in
  check)
    ! missing ;;
  install)
    if ! missing; then
      exit 0
    fi
    pkgs=(chromium chromium-driver)
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${pkgs[@]}" || {
      apt-get update && apt-get install -y --no-install-recommends "${pkgs[@]}"
    }
    if missing; then
      echo "chromium and chromium-driver are still missing" >&2
      exit 1
    fi ;;
  *)
    echo "usage: $0 install|check" >&2
    exit 2 ;;
esac
