#!/usr/bin/env python3
"""The program a TensorFlow user runs on the same capture: xprof's converter
(TensorBoard's profile plugin) turning one .xplane.pb into a tool's data.
Usage: xprof_peer.py TOOL FILE (TOOL: input_pipeline_analyzer, overview_page).
Exit 0 when it produced data; the data goes to /dev/null."""
import os
import sys

# the converter logs every phase on stderr: not part of what is measured
_null = os.open(os.devnull, os.O_WRONLY)
os.dup2(_null, 2)
from xprof.convert import raw_to_tool_data  # noqa: E402


def main():
    tool, path = sys.argv[1], sys.argv[2]
    data, _ = raw_to_tool_data.xspace_to_tool_data([path], tool, {"use_saved_result": False})
    return 0 if data else 1


if __name__ == "__main__":
    sys.exit(main())
