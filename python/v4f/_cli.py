"""Console entry points: ``v4fc`` and ``v4f-run`` run the tools installed in
the package (the same binaries a CMake build produces)."""

import os
import sys

from ._tools import tool_path


def _exec(name):
    path = tool_path(name)
    os.execv(path, [path] + sys.argv[1:])


def v4fc():
    _exec("v4fc")


def v4f_run():
    _exec("v4f-run")
