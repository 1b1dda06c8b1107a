"""Browser fixtures: headless Chromium (the system one, via playwright) and a real JupyterLab.

Tests that use them are marked ``@pytest.mark.browser``. A missing Chromium or front-end bundle
FAILS the test (CI installs both); it is never a silent skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
STATIC = REPO / "inductor_lens" / "static"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
# Chromium's own address-bar UI: each window (a page of ours) preloads its WebUI omnibox popups, each in a renderer
# process of its own (about 1 CPU-s per page opened); the pages under test never see them
NO_OMNIBOX_WEBUI = ["WebUIOmniboxPopup", "WebUIOmniboxFullPopup", "WebUIOmniboxAimPopup"]


def _require_bundle() -> None:
    missing = [f for f in ("lens.js", "lens.css", "layout-worker.js") if not (STATIC / f).exists()]
    if missing:
        pytest.fail(f"front-end bundle missing ({', '.join(missing)}): run `make bundle`", pytrace=False)


# The Chromium the browser tests drive: its headless shell where it is installed (`apt-get install
# chromium-headless-shell`, as .ci/run does), else the browser. The shell is the same Chromium (Blink, V8, the
# compositor) without the browser's own windows and UI, the build Playwright itself drives headless: a page of ours
# opened in it cost half the CPU (benchmarks/RESULTS.md, the twenty-third session), and the browser tests are about a
# quarter of the suite's CPU. ``test_html_export.py``'s command-line screenshots run the browser, as users do.
CHROMIUM_BUILDS = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium_exe() -> str:
    """The first of CHROMIUM_BUILDS on PATH; a test fails with what to install where there is none."""
    exe = next((found for found in map(shutil.which, CHROMIUM_BUILDS) if found), None)
    if not exe:
        pytest.fail("chromium is not on PATH (apt-get install chromium); browser tests need it", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def chromium_browser():
    """One headless Chromium for the session (the system's, found on PATH: ``chromium_exe``)."""
    exe = chromium_exe()
    _require_bundle()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        # Chromium takes the last --disable-features only, and Playwright passes its own: ours must hold both.
        # Playwright's is read from the browser it launched; without it, that browser is kept as it is (the
        # headless shell has no omnibox to turn off).
        theirs = _disabled_features(os.getpid()) if "headless-shell" not in exe else None
        if theirs is not None:
            browser.close()
            features = ",".join([*theirs, *NO_OMNIBOX_WEBUI])
            browser = p.chromium.launch(executable_path=exe, args=[*CHROMIUM_ARGS, f"--disable-features={features}"])
        yield browser
        browser.close()


def _disabled_features(root: int) -> list[str] | None:
    """The features of the --disable-features switch of the Chromium browser process below process ``root``
    (Playwright's driver starts it: ``--remote-debugging-pipe``), or None where it cannot be read (no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            stat = entry.read_text()
            children.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(entry.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "--remote-debugging-pipe" in argv:
            found = [a.split("=", 1)[1] for a in argv if a.startswith("--disable-features=")]
            return [f for f in found[-1].split(",") if f] if found else []
    return None


class PageWatch:
    """Collects what a page did that a test may forbid: console errors, page errors, dialogs,
    and requests that left the page (anything but file:, blob:, data:)."""

    def __init__(self, page, allow_console=()):
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.allow_console = allow_console
        page.on("console", self._console)
        page.on("pageerror", self._pageerror)
        page.on("dialog", self._dialog)

    def stop(self) -> None:
        """Stop watching (a page that outlives the test: ``lab_page``)."""
        self.page.remove_listener("console", self._console)
        self.page.remove_listener("pageerror", self._pageerror)
        self.page.remove_listener("dialog", self._dialog)

    def _pageerror(self, error):
        self.errors.append(f"pageerror: {error}")

    def _console(self, msg):
        if msg.type == "error" and not any(a in msg.text for a in self.allow_console):
            # a resource that failed to load is named by the message's location only
            where = (msg.location or {}).get("url", "")
            self.errors.append(f"console: {msg.text}" + (f" [{where}]" if where else ""))

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()


# Jupyter Server answers 500 to JupyterLab's poll of /api/kernels when the poll lands while a kernel is starting: the
# kernel is listed before its last_activity is set (a race of jupyter_server's list_kernels, seen in CI on a loaded
# machine; the same race as jupyter/notebook#5345 in the culler). Not ours, and JupyterLab polls again.
_KERNEL_LIST_RACE = (
    "The 'last_activity' trait of a ServerKernelManager instance expected a datetime, not the NoneType None"
)


def lab_errors(watch: PageWatch, root: pathlib.Path) -> list[str]:
    """The errors of ``watch`` on a JupyterLab page, less each 500 of a GET /api/kernels that the server's log
    (ROOT/server.log) shows to be Jupyter Server's own kernel-list race (``_KERNEL_LIST_RACE``): matched by the
    request's URL with its query, so that any other 500, or a 500 of this URL for another cause, stays an error."""
    log = (root / "server.log").read_text(encoding="utf-8", errors="replace")
    # a record of the log is a line that starts with "[" and the indented lines under it (a traceback)
    records = re.split(r"\n(?=\[)", log)
    raced = set()
    for record in records:
        head = re.match(r"\[E [^\]]*\] Uncaught exception GET (/api/kernels\?\S*) ", record)
        if head and _KERNEL_LIST_RACE in record:
            raced.add(head.group(1))
    answered = {m.group(1) for m in re.finditer(r"\] 500 GET (\S+) ", log)}
    kept = []
    for e in watch.errors:
        url = e[e.rindex(" [") + 2 : -1] if e.endswith("]") and " [" in e else ""
        path = "/" + url.split("://", 1)[-1].partition("/")[2] if url else ""
        if not ("status of 500" in e and path in raced & answered):
            kept.append(e)
    return kept


class _OfflineContext:
    """One browser context for the pages of a session's file-page tests: a context costs Chromium about 0.8 CPU-s
    (a renderer process and its set-up), a page in an open context much less, and the pages of our exported files
    keep nothing in the context (no storage, no cookies, no service worker). Every request but file:, blob: and
    data: is blocked and recorded on the PageWatch of the page open now (one at a time: tests on a worker run one
    after the other); the route is the context's, so that requests of the page's workers are caught too."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.watch: PageWatch | None = None
        self.context.route("**/*", self._route)

    def _route(self, r):
        url = r.request.url
        if url.startswith(("file:", "blob:", "data:")):
            r.continue_()
        else:
            if self.watch is not None:
                self.watch.requests.append(url)
            r.abort()

    def new_page(self, viewport=None, color_scheme="light"):
        """A fresh page (its own document, listeners and init scripts) at ``viewport`` (the context's 1400 x 900 by
        default) in ``color_scheme``, its requests recorded on ``page.watch``."""
        page = self.context.new_page()
        if viewport is not None:
            page.set_viewport_size(viewport)
        page.emulate_media(color_scheme=color_scheme)
        page.watch = self.watch = PageWatch(page)
        return page


@pytest.fixture(scope="session")
def offline_context(chromium_browser):
    """The session's one context for exported pages (``_OfflineContext``); ``offline_page`` opens its pages in it."""
    ctx = _OfflineContext(chromium_browser)
    yield ctx
    ctx.context.close()


@pytest.fixture
def offline_page(offline_context, request):
    """A fresh page whose every network request is blocked and recorded (file:, blob:, data: pass).
    Parametrize indirectly with ``"dark"`` for the dark colour scheme."""
    page = offline_context.new_page(color_scheme=getattr(request, "param", "light"))
    yield page
    # Playwright's clock is the context's: installed on this page, it would run every later page of the session's
    # context too (their timers then wait on a clock no one moves); a test that runs the clock has a context of its own
    try:
        faked = page.evaluate("() => !/\\[native code\\]/.test(Date.now.toString())")
    except Exception:  # a page the test closed or crashed: nothing to tell
        faked = False
    page.close()
    if faked:
        pytest.fail(
            "this test installed Playwright's clock (page.clock) on the shared offline context, where every later "
            "page would run on it: open its page in a context of its own (_OfflineContext(chromium_browser))",
            pytrace=False,
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(name, cmd, root, env, url, probe=""):
    """Start a server (its log in ROOT/server.log), wait until ``url + probe`` answers (90 s at most),
    yield ``(url, root)``, then stop it: the body of a server fixture."""
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(url + probe, timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{name} did not start; log:\n{(root / 'server.log').read_text()[-3000:]}", pytrace=False)
            time.sleep(0.5)
    try:
        yield url, root
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    """A real JupyterLab server for the session: yields (base_url, root_dir)."""
    _require_bundle()
    root = tmp_path_factory.mktemp("lab")
    port = _free_port()
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        JUPYTER_CONFIG_DIR=str(root / ".jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(root / ".jupyter-runtime"),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]
    yield from serve("JupyterLab", cmd, root, env, f"http://127.0.0.1:{port}", "/api/status")


def write_notebook(path: pathlib.Path, cells: list[str]) -> None:
    """A notebook of code ``cells`` (nbformat 4.5, as ``nbformat.v4`` writes one), written as JSON: importing
    nbformat to write it validates it with jsonschema, ~1.8 CPU-s of the worker's for a file JupyterLab reads anyway."""
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": c,
            }
            for i, c in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1) + "\n")


@pytest.fixture(scope="session")
def lab_page(jupyter_lab, chromium_browser):
    """One JupyterLab page (1500 x 1000) for the session: loading JupyterLab costs Chromium seconds of CPU, so the
    JupyterLab tests open their notebooks in this one page (``open_notebook``) and close them after
    (``close_notebook``), each test watching the page with a PageWatch of its own."""
    base, _ = jupyter_lab
    context = chromium_browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    page.goto(f"{base}/lab?reset")
    page.wait_for_function("() => !!window.jupyterapp", timeout=90000)
    page.evaluate("() => window.jupyterapp.restored")
    yield page
    context.close()


def open_notebook(page, base_url: str, name: str, timeout_ms: int = 90000) -> None:
    """Open a notebook in JupyterLab and wait until it is the current widget with its kernel connected and idle.
    A page that shows JupyterLab already (``lab_page``) opens it with JupyterLab's own command; another loads it."""
    if page.url.startswith(f"{base_url}/lab"):
        page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", name)
    else:
        page.goto(f"{base_url}/lab/tree/{name}?reset")
    page.wait_for_function(
        """(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                   const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                   return !!k && w.context.path === name && k.connectionStatus === 'connected' && k.status === 'idle'; }""",
        arg=name,
        timeout=timeout_ms,
    )


def close_notebook(page) -> None:
    """Shut down the current notebook's kernel and close it without asking (the next test starts from no notebook).
    Called in a test's ``finally``: a failure here is not raised over the test's own."""
    with contextlib.suppress(Exception):
        page.evaluate(
            """async () => { const w = window.jupyterapp.shell.currentWidget;
                       if (!w || !w.sessionContext) return;
                       await w.sessionContext.shutdown();
                       w.context.model.dirty = false;
                       w.dispose(); }"""
        )


def run_all(page, timeout_ms: int = 120000) -> None:
    """Run every cell of the current notebook and wait for the kernel to go idle with all done."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   const cells = w.content.widgets.filter(c => c.model.type === 'code');
                   return w.sessionContext.session.kernel.status === 'idle'
                     && cells.every(c => c.model.executionCount !== null); }""",
        timeout=timeout_ms,
    )


def cell_text(page, index: int) -> str:
    """The plain-text outputs of code cell ``index`` of the current notebook."""
    return page.evaluate(
        """(i) => { const w = window.jupyterapp.shell.currentWidget;
                    const c = w.content.widgets.filter(c => c.model.type === 'code')[i];
                    const outs = c.model.outputs.toJSON();
                    return outs.map(o => o.text || (o.data && o.data['text/plain']) || o.evalue || '').join(''); }""",
        index,
    )


def dump_json(obj, path: pathlib.Path) -> None:
    path.write_text(json.dumps(obj), encoding="utf-8")


def source_text(src) -> str:
    """The kernel source's text as a user reads it: scrolled into view, once drawn. The panel draws the source
    (``[data-role=kernel-source]``) only when it comes near the view (``content-visibility: auto``: a click
    paints the panel's top at once, issue 26), and ``innerText`` is empty until then."""
    src.scroll_into_view_if_needed()
    src.evaluate(
        """(el) => new Promise((resolve) => {
          const t0 = performance.now();
          const poll = () => (el.innerText.trim() || performance.now() - t0 > 5000 ? resolve() : requestAnimationFrame(poll));
          poll();
        })"""
    )
    return src.inner_text()
