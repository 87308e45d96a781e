"""Loads page.html in headless Chromium from two origins and prints what the page rendered.

The page is served by two HTTP servers on 127.0.0.1, port 0 each, so two origins that differ from
the Skiff server's (another port is another origin): the test allows the first through CORS and
not the second. The ordering:

  1. this script binds both page servers and prints `origins http://127.0.0.1:A http://127.0.0.1:B`;
  2. the test starts the Skiff server allowing A, and writes `api http://127.0.0.1:PORT` on stdin;
  3. this script loads `page.html?api=…&query=…` from A, then from B, each in a fresh headless
     Chromium with its own temporary profile, and prints the text of the page's #result, each line
     prefixed with `allowed ` or `other `.

Usage: browser_check.py [--query WORD] [--timeout SECONDS] [--chromium PATH]
Exits 0 when both loads finished (the page set data-done), 1 otherwise, 2 when Chromium is missing.
Every wait is bounded; Chromium runs in its own process group, killed on timeout or exit.
"""

import argparse
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


class PageHandler(http.server.BaseHTTPRequestHandler):
    """Serves page.html at /page.html (any query), 404 for anything else."""

    def __init__(self, page: bytes, *args, **kwargs):
        self.page = page
        super().__init__(*args, **kwargs)

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path != "/page.html":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(self.page)))
        self.send_header("cache-control", "no-store")
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format, *args):
        pass


def serve(page: bytes) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(PageHandler, page))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def read_line(deadline: float) -> str:
    """One line from stdin, waiting until `deadline` at most."""
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SystemExit("timed out waiting for the Skiff server's address on stdin")
        ready, _, _ = select.select([0], [], [], remaining)
        if ready:
            chunk = os.read(0, 1)
            if not chunk:
                raise SystemExit("stdin closed before the Skiff server's address came")
            data += chunk
    return data.decode().strip()


def load(chromium: str, url: str, timeout: float) -> tuple[str | None, str]:
    """Loads `url` in a fresh headless Chromium and waits until the page marks #result done; returns
    its text (None when it did not finish in `timeout` seconds) and a diagnosis.

    Chromium is driven through the DevTools protocol on a pipe (--remote-debugging-pipe: commands
    on its fd 3, answers on its fd 4, each a JSON text ending in a NUL byte). Not --dump-dom with
    --virtual-time-budget: virtual time runs on once a response's headers arrived, so it would
    fire the page's timeouts (or dump the DOM) while a gRPC-Web stream's body is still coming."""
    profile = tempfile.mkdtemp(prefix="skiff-chromium-")
    to_chromium_read, to_chromium = os.pipe()
    from_chromium, from_chromium_write = os.pipe()
    # The child's ends, above 4, so that MOVE_FDS_AND_EXEC can move them to 3 and 4.
    child_read = fcntl.fcntl(to_chromium_read, fcntl.F_DUPFD, 10)
    child_write = fcntl.fcntl(from_chromium_write, fcntl.F_DUPFD, 10)
    os.close(to_chromium_read)
    os.close(from_chromium_write)
    process = None
    log = tempfile.TemporaryFile()
    try:
        process = subprocess.Popen(
            [
                sys.executable, "-c", MOVE_FDS_AND_EXEC, str(child_read), str(child_write), chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update", "--mute-audio",
                f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
            ],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(child_read, child_write),
            start_new_session=True,
        )
        os.close(child_read)
        os.close(child_write)
        child_read = child_write = -1
        devtools = DevTools(to_chromium, from_chromium, time.monotonic() + timeout)
        target = devtools.call("Target.createTarget", {"url": url})["targetId"]
        session = devtools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        check = ("(() => { const r = document.getElementById('result');"
                 " return r && r.dataset.done ? r.textContent : null; })()")
        while True:
            answer = devtools.call("Runtime.evaluate", {"expression": check, "returnByValue": True}, session)
            value = answer.get("result", {}).get("value")
            if value is not None:
                return value, ""
            time.sleep(0.05)
    except (TimeoutError, OSError, KeyError, ValueError) as error:
        log.seek(0)
        return None, f"{type(error).__name__}: {error}\n{log.read().decode(errors='replace')[-2000:]}"
    finally:
        if process is not None:
            kill(process)
        for fd in (to_chromium, from_chromium, child_read, child_write):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        log.close()
        shutil.rmtree(profile, ignore_errors=True)


# Run in the child by Python (not preexec_fn, unsafe with the page servers' threads): moves the
# DevTools pipe's ends given as arguments to fds 3 and 4, where Chromium expects them, then execs it.
MOVE_FDS_AND_EXEC = """
import os, sys
read, write = int(sys.argv[1]), int(sys.argv[2])
os.dup2(read, 3, inheritable=True)
os.dup2(write, 4, inheritable=True)
os.close(read)
os.close(write)
os.execvp(sys.argv[3], sys.argv[3:])
"""


class DevTools:
    """Calls over Chromium's DevTools pipe, each answered before `deadline` (time.monotonic())."""

    def __init__(self, write_fd: int, read_fd: int, deadline: float):
        self.write_fd, self.read_fd, self.deadline = write_fd, read_fd, deadline
        self.next_id = 0
        self.buffer = b""

    def call(self, method: str, params: dict, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.receive()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise ValueError(f"{method}: {answer['error']}")
                return answer["result"]

    def receive(self) -> dict:
        while b"\0" not in self.buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the page did not finish in time")
            ready, _, _ = select.select([self.read_fd], [], [], remaining)
            if ready:
                chunk = os.read(self.read_fd, 65536)
                if not chunk:
                    raise OSError("Chromium closed its DevTools pipe (it exited)")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)


def kill(process: subprocess.Popen) -> None:
    """Kills Chromium's whole process group (browser, zygote, renderers), whether or not it ended."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--query", default="bike")
    parser.add_argument("--timeout", type=float, default=15, help="seconds per page load")
    parser.add_argument("--chromium", default="chromium")
    args = parser.parse_args()
    # The test stops this script with SIGTERM on its own timeout: run the finally blocks then.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    chromium = shutil.which(args.chromium)
    if chromium is None:
        print(f"MISSING {args.chromium} is not installed (dev/test.sh installs it: apt-get install chromium)",
              flush=True)
        return 2
    with open(os.path.join(HERE, "page.html"), "rb") as file:
        page = file.read()
    servers = {"allowed": serve(page), "other": serve(page)}
    try:
        origins = {name: f"http://127.0.0.1:{server.server_address[1]}" for name, server in servers.items()}
        print(f"origins {origins['allowed']} {origins['other']}", flush=True)
        line = read_line(time.monotonic() + 30)
        if not line.startswith("api "):
            raise SystemExit(f"expected `api URL` on stdin, got {line!r}")
        query = urllib.parse.urlencode({"api": line[4:], "query": args.query})
        finished = True
        for name, origin in origins.items():
            started = time.monotonic()
            text, diagnosis = load(chromium, f"{origin}/page.html?{query}", args.timeout)
            if text is None:
                finished = False
                print(f"{name} FAILED the page did not finish: {diagnosis}", flush=True)
                continue
            for result in text.splitlines():
                print(f"{name} {result}", flush=True)
            print(f"{name} took {time.monotonic() - started:.1f} s", flush=True)
        return 0 if finished else 1
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    sys.exit(main())
