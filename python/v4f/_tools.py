"""Where the package's command-line tools are: v4f/_bin inside an installed
package, else $V4F_BIN_DIR (a build's bin/, for development), else PATH."""

import os
import shutil

_HERE = os.path.dirname(os.path.abspath(__file__))


def tool_path(name):
    """The path of ``v4fc`` or ``v4f-run``; raises NotFoundError if absent."""
    candidates = []
    env = os.environ.get("V4F_BIN_DIR")
    if env:
        candidates.append(os.path.join(env, name))
    candidates.append(os.path.join(_HERE, "_bin", name))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    if found:
        return found
    from ._errors import NotFoundError

    raise NotFoundError(
        f"{name} not found (looked in {', '.join(candidates)} and PATH); "
        "install the package with `pip install .` from the v4f repository")
