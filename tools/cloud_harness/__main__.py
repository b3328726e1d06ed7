"""``python3 tools/cloud_harness COMMAND``: the directory itself is on sys.path then; the
package is imported from its parent."""
import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from cloud_harness import cli  # noqa: E402

try:
    sys.exit(cli.main())
except BrokenPipeError:  # a reader that stopped early (help | head)
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)
