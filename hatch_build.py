"""Builds the front-end bundle (js/ -> inductor_lens/static/) for every package build, and only when needed.

One rule, used in two places:
- hatchling runs it as a build hook (``[tool.hatch.build.hooks.custom]``) for the sdist, the wheel and an
  editable install, so both archives carry the built bundle;
- the Makefile runs it as a script (``python hatch_build.py``) before the tests.

The bundle is *fresh* when ``inductor_lens/static/bundle-source.sha256`` holds the hash of the sources it was
built from (js/src, js/build.mjs, js/package.json, js/package-lock.json). A fresh bundle is never rebuilt,
so a wheel built from the sdist (which carries the bundle and that hash) needs no Node.js. A missing or
stale bundle is rebuilt with npm; without npm, a stale bundle is kept with a warning and a missing one
fails with a message that says what to install.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script by the Makefile, where hatchling need not be installed
    BuildHookInterface = object

ROOT = pathlib.Path(__file__).resolve().parent
JS = ROOT / "js"
STATIC = ROOT / "inductor_lens" / "static"
BUNDLE = ("lens.js", "lens.css", "layout-worker.js", "layout-worker.js.gz")
STAMP = STATIC / "bundle-source.sha256"


class BundleError(RuntimeError):
    pass


def source_hash() -> str | None:
    """sha256 over the front end's sources (path and bytes of each), or None when js/ is absent."""
    files = [JS / "build.mjs", JS / "package.json", JS / "package-lock.json"]
    if not all(f.is_file() for f in files):
        return None
    files += sorted(p for p in (JS / "src").rglob("*") if p.is_file())
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(JS).as_posix().encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()


def bundle_state() -> tuple[str, str | None]:
    """('missing' | 'stale' | 'fresh', source hash)."""
    digest = source_hash()
    if not all((STATIC / f).is_file() for f in BUNDLE):
        return "missing", digest
    if digest is None:  # an unpacked wheel-like tree without js/: nothing to rebuild from
        return "fresh", digest
    recorded = STAMP.read_text().strip() if STAMP.is_file() else ""
    return ("fresh" if recorded == digest else "stale"), digest


def _npm(*args: str) -> None:
    subprocess.run([shutil.which("npm"), *args], cwd=JS, check=True)


def ensure_bundle(log=print) -> str:
    """Builds the bundle if it is missing or stale; returns what was done ('fresh', 'built', 'kept stale')."""
    state, digest = bundle_state()
    if state == "fresh":
        _gzip_engine(stale_only=True)  # a bundle built before lens.js.gz was: no npm needed to add it
        return "fresh"
    if shutil.which("npm") is None or shutil.which("node") is None:
        if state == "stale":
            log(
                "inductor_lens: WARNING: js/ changed since the front-end bundle was built, and node/npm are "
                "not on PATH: packaging the existing bundle in inductor_lens/static/"
            )
            return "kept stale"
        raise BundleError(
            "inductor_lens: the front-end bundle (inductor_lens/static/) is missing and node/npm are not on "
            "PATH to build it from js/. Install Node.js >= 18 with npm, or build from the sdist, which carries "
            "the bundle."
        )
    if digest is None:
        raise BundleError("inductor_lens: the front-end bundle is missing and js/ (its sources) is not here")
    lock = JS / "node_modules" / ".package-lock.json"
    if not lock.is_file() or lock.stat().st_mtime < (JS / "package-lock.json").stat().st_mtime:
        log("inductor_lens: installing the front end's npm packages (npm ci)")
        _npm("ci", "--no-audit", "--no-fund")
    log(f"inductor_lens: building the front-end bundle ({state})")
    _npm("run", "build")
    _gzip_engine()
    tmp = STAMP.with_suffix(".tmp")
    tmp.write_text(digest + "\n")
    os.replace(tmp, STAMP)
    return "built"


def _gzip_engine(stale_only: bool = False) -> None:
    """``layout-worker.js.gz``: the layout worker (Graphviz WASM, 1.5 MB) gzip'd once at build time, as every page
    and widget embeds it (``views/frontend.engine_gz``): level 9 with no timestamp, so it is deterministic.
    ``lens.js.gz`` likewise: every page embeds the bundle so (``views/frontend.bundle_b64``). ``stale_only``:
    only the files missing or older than their source."""
    import gzip

    for name in ("layout-worker.js", "lens.js"):
        src, out = STATIC / name, STATIC / f"{name}.gz"
        if stale_only and out.is_file() and out.stat().st_mtime_ns >= src.stat().st_mtime_ns:
            continue
        tmp = STATIC / f"{name}.gz.tmp"
        tmp.write_bytes(gzip.compress(src.read_bytes(), compresslevel=9, mtime=0))
        os.replace(tmp, out)


class CustomBuildHook(BuildHookInterface):
    """hatchling's hook: every target (sdist, wheel, editable) gets a fresh bundle first."""

    def initialize(self, version, build_data):
        try:
            ensure_bundle(log=self.app.display_info)
        except (BundleError, subprocess.CalledProcessError) as e:
            self.app.abort(str(e))


if __name__ == "__main__":
    try:
        print(f"inductor_lens: front-end bundle {ensure_bundle()}")
    except (BundleError, subprocess.CalledProcessError) as e:
        sys.exit(str(e))
