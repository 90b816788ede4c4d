#!/usr/bin/env python3
"""The program a TensorFlow user runs on the same capture: xprof's converter
(TensorBoard's profile plugin) turning one .xplane.pb into a tool's data.
Usage: xprof_peer.py TOOL FILE (TOOL: input_pipeline_analyzer, overview_page).
Exit 0 when it produced data; the data goes to /dev/null. The converter
writes its cache (ALL_HOSTS.op_stats_v2.pb) beside the file it reads: it
reads a link to FILE in a scratch directory, removed after, so that the
capture's own directory (a committed example) is never written."""
import os
import sys
import tempfile

# the converter logs every phase on stderr: not part of what is measured
_null = os.open(os.devnull, os.O_WRONLY)
os.dup2(_null, 2)
from xprof.convert import raw_to_tool_data  # noqa: E402


def main():
    tool, path = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="xprof-peer-") as d:
        link = os.path.join(d, os.path.basename(path))
        os.symlink(os.path.abspath(path), link)
        data, _ = raw_to_tool_data.xspace_to_tool_data([link], tool, {"use_saved_result": False})
    return 0 if data else 1


if __name__ == "__main__":
    sys.exit(main())
