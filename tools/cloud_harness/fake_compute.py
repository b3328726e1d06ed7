"""Fake hypervisor of Climate's cloud harness (installed by tools/cloud-harness.sh).

One node per nova-compute, named after [DEFAULT] host, with a stable identity so that the
process can be restarted, and a size taken from CC_FAKE_VCPUS / _RAM_MB / _DISK_GB.
"""
import os

from nova.virt import fake


class Driver(fake.FakeDriverWithoutFakeNodes):
    vcpus = int(os.environ.get("CC_FAKE_VCPUS", "32"))
    memory_mb = int(os.environ.get("CC_FAKE_RAM_MB", "131072"))
    local_gb = int(os.environ.get("CC_FAKE_DISK_GB", "2048"))
