"""What a manager runs in the background, apart from its RPC endpoints:
the event engine, the heartbeat, the retries of waiting leases, the hunts
of best-effort leases, webhook delivery and the periodic passes, each a
thread on one base (``base.Worker``)."""
