"""Climate's cloud harness: a real OpenStack on 127.0.0.1 for the integration tests.

``python3 tools/cloud_harness COMMAND`` (or ``tools/cloud-harness.sh COMMAND``); ``help``
lists the commands and settings. The CLI needs only the standard library; cloud_api runs in
the cloud's venv, fake_compute and fake_volume are copied into it.
"""
