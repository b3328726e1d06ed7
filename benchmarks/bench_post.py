"""POST /v1/leases with one noop reservation, sequential requests."""

import time

import common

REQUESTS = 1000
WARMUP = 30
TARGET_P50 = 10.0
TARGET_P99 = 30.0


def run(requests=REQUESTS, managers=1):
    print('== POST /v1/leases: %d sequential creates, API 2 threads, %d '
          'manager(s), %s, %s client' % (requests, managers, common.ENGINE,
                                         common.CLIENT))
    with common.Climate(managers=managers, api_threads=2) as env:
        client = env.latency_client()
        times = []
        for i in range(WARMUP + requests):
            body = {'name': 'post-%05d' % i,
                    'start_date': '2099-01-01 00:00',
                    'end_date': '2099-01-02 00:00',
                    'reservations': [{'resource_type': 'noop'}],
                    'events': []}
            began = time.perf_counter()
            client.request('POST', '/v1/leases', expect=(201,), json=body)
            elapsed = (time.perf_counter() - began) * 1000
            if i >= WARMUP:
                times.append(elapsed)
        client.close()
        p50 = common.percentile(times, 50)
        p99 = common.percentile(times, 99)
        print('  POST latency: %s' % common.summary(times))
        print('  p50 %s; p99 %s' % (common.verdict(p50, TARGET_P50),
                                    common.verdict(p99, TARGET_P99)))
        return {'post_p50_ms': p50, 'post_p99_ms': p99}


if __name__ == '__main__':
    run()
