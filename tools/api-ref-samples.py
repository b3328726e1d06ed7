#!/usr/bin/env python3
"""Write the API reference's samples (api-ref/source/samples/) from the
running API: climate.tests.api_samples's conversation with a whole
Climate in this process, on SQLite, without authentication.

Run it after a change of what a route answers (the unit test
climate/tests/unit/test_api_ref.py says which samples differ):

    python tools/api-ref-samples.py          # new and changed samples
    python tools/api-ref-samples.py --all    # every sample

A sample whose keys are those of the answer is left as it is (its ids
and dates are another run's, and would change at every run), unless
``--all``; a sample no step writes any longer is removed.
"""

import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from climate.tests import api_samples  # noqa: E402


def _read(path):
    with open(path, encoding='utf-8', newline='') as sample:
        return sample.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--all', action='store_true',
                        help='rewrite every sample, not only the new and '
                             'changed ones')
    args = parser.parse_args()
    samples = api_samples.capture()
    root = api_samples.SAMPLES_DIR
    written = removed = 0
    for path in glob.glob(os.path.join(root, '**', '*.*'), recursive=True):
        if os.path.relpath(path, root) not in samples:
            os.remove(path)
            removed += 1
    for name, text in sorted(samples.items()):
        path = os.path.join(root, name)
        if not args.all and os.path.exists(path) and \
                api_samples.shape_of_text(name, _read(path)) == \
                api_samples.shape_of_text(name, text):
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8', newline='') as out:
            out.write(text)
        written += 1
        print('wrote', os.path.relpath(path))
    print('%d samples: %d written, %d removed' % (len(samples), written,
                                                   removed))


if __name__ == '__main__':
    main()
