"""Integration tests: Climate against a real OpenStack (tools/cloud-harness.sh)."""
