"""``physical:host``: whole compute hosts, reserved for a time window."""
