"""``climate billing-rates-set/-show`` and ``climate billing`` (microversion
1.10) against a running climate-all.  What a bill adds up is checked in
climate/tests/unit/api/test_billing.py; here, the commands."""

import csv
import io
import json


def test_billing_commands(cli, tmp_path):
    rates = tmp_path / 'rates.json'
    rates.write_text(json.dumps({'currency': 'EUR', 'lease_fee': 1,
                                 'hourly': {'VCPU': 0.05}}))
    done = cli('billing-rates-set', '--file', str(rates), '-f', 'json')
    assert done.code == 0, done
    assert json.loads(done.out)['hourly'] == {'VCPU': 0.05}
    done = cli('billing-rates-show', '-f', 'json', project='someone')
    assert done.code == 0, done
    assert json.loads(done.out)['currency'] == 'EUR'

    # only administrators set them; a bad table names its field
    done = cli('billing-rates-set', '--json', '{"lease_fee": 2}',
               project='someone')
    assert done.code == 1 and '(HTTP 403)' in done.err, done
    done = cli('billing-rates-set', '--json', '{"hourly": {"VCPU": -1}}')
    assert done.code == 1
    assert 'hourly.VCPU must be between 0 and' in done.err, done
    done = cli('billing-rates-set', '--json', '{not json')
    assert done.code == 1
    assert 'The rate table is not JSON' in done.err, done
    done = cli('billing-rates-set', '--file', str(tmp_path / 'missing'))
    assert done.code == 1 and 'No such file' in done.err, done

    done = cli('billing', '--start', '2020-01-01T00:00', '--end',
               '2020-02-01T00:00', '-f', 'csv', project='someone')
    assert done.code == 0, done
    assert done.err == ('someone from 2020-01-01T00:00:00.000000 to '
                        '2020-02-01T00:00:00.000000: 0 EUR\n')
    header = next(csv.reader(io.StringIO(done.out)))
    assert header[:4] == ['project_id', 'lease_name', 'lease_id', 'kind']
    done = cli('billing', '--all-projects', '--start', '2020-01-01T00:00',
               '--end', '2020-02-01T00:00')
    assert done.code == 0, done
    assert done.err.startswith('Every project from 2020-01-01'), done
    done = cli('billing', '--all-projects', project='someone')
    assert done.code == 1 and '(HTTP 403)' in done.err, done

    assert cli('billing-rates-set', '--json', '{}').code == 0
