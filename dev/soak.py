#!/usr/bin/env python3
"""Soak a release skiff-server with the attacks of issue 9 and report what they cost it.

Each attack runs for a few minutes against a server started here (loopback only); for each
the script reports the server's RSS before, at its peak and after, and the health of a
control connection that makes a call every 200 ms throughout (calls, failures, latency).

    dev/soak.sh                       # builds the release server, then runs this
    dev/soak.py --binary .build/release/skiff-server --seconds 120 --attacks slow-reader,churn

Attacks:
  slow-reader  3 connections announce 2^31-1 windows and ask for 400 streams of 20 × 1 MiB
               each, plus 3 with default windows and 1,000 unary calls of 4,000,000 bytes
               each; none of them ever reads. A connection the server drops (send-stall
               timeout) is replaced at once.
  half-open    connections that send HEADERS and nothing else (100 streams each) until the
               server refuses more; held for the duration.
  churn        4 threads connect, exchange the preface and SETTINGS and close, as fast as
               they can (a third end with a protocol violation, a third with a bad preface).
  tag-bomb     a signed-in user sends CreateListing with 64,000 tags and SearchListings with
               1,000 filter tags from 2 threads, as fast as answers come.

Only the standard library is used: frames and the few protobuf messages are encoded by hand.
"""

import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

PREFACE = b"\x89SKF\x01\x00\x00\x00"
SETTINGS, HEADERS, MESSAGE, TRAILERS, RST, WINDOW_UPDATE, PING, GOAWAY, HALF_CLOSE = range(1, 10)
END_STREAM = 0x01


# ---------------------------------------------------------------- wire helpers

def frame(ftype, flags, stream_id, payload=b""):
    return struct.pack(">IBBHI", len(payload), ftype, flags, 0, stream_id) + payload


def settings(pairs=()):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def headers(stream_id, path, metadata=(), flags=0):
    p = path.encode()
    block = struct.pack(">H", len(metadata))
    for key, value in metadata:
        k, v = key.encode(), value.encode()
        block += struct.pack(">H", len(k)) + k + struct.pack(">I", len(v)) + v
    return frame(HEADERS, flags, stream_id, struct.pack(">H", len(p)) + p + block)


def message(stream_id, payload, flags=END_STREAM, max_frame=65536):
    """A MESSAGE, in fragments (MORE) when it does not fit one frame."""
    if len(payload) <= max_frame:
        return frame(MESSAGE, flags, stream_id, payload)
    pieces = [payload[i:i + max_frame] for i in range(0, len(payload), max_frame)]
    return b"".join(frame(MESSAGE, 0x04, stream_id, p) for p in pieces[:-1]) + frame(MESSAGE, flags, stream_id, pieces[-1])


def varint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(number << 3 | 2) + varint(len(data)) + data


def field_double(number, value):
    return varint(number << 3 | 1) + struct.pack("<d", value)


def parse_fields(data):
    """Top-level protobuf fields: {number: [values]} (varints as ints, length-delimited as bytes)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            length, i = read_varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type")
        fields.setdefault(number, []).append(value)
    return fields


def read_varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


class Connection:
    """A blocking skiff/1 client good for one call at a time (and for attacks)."""

    def __init__(self, port, pairs=(), timeout=10, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(PREFACE + settings(pairs))
        self.next_id = 1
        self.buffer = b""
        self.preface_read = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_frame(self):
        if not self.preface_read:
            if self.read_exact(8) != PREFACE:
                raise ValueError("not a Skiff server")
            self.preface_read = True
        length, ftype, flags, _, sid = struct.unpack(">IBBHI", self.read_exact(12))
        return ftype, flags, sid, self.read_exact(length)

    def call(self, path, request, metadata=()):
        """One unary call: (status, message, [response bytes])."""
        sid = self.next_id
        self.next_id += 2
        self.sock.sendall(headers(sid, path, metadata) + message(sid, request))
        responses, credit = [], 0
        while True:
            ftype, flags, fsid, payload = self.read_frame()
            if ftype in (SETTINGS, PING) and not flags & 0x01:
                self.sock.sendall(frame(ftype, 0x01, 0, payload if ftype == PING else b""))
            elif ftype == MESSAGE and fsid == sid:
                responses.append(payload)
                credit += len(payload)
                if credit > 1 << 20:
                    self.sock.sendall(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", credit)))
                    credit = 0
            elif ftype == TRAILERS and fsid == sid:
                if credit:
                    self.sock.sendall(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", credit)))
                status, msg_len = struct.unpack_from(">IH", payload)
                return status, payload[6:6 + msg_len].decode(errors="replace"), responses
            elif ftype == RST and fsid == sid:
                return struct.unpack_from(">I", payload)[0], payload[4:].decode(errors="replace"), responses
            elif ftype == GOAWAY:
                last, status = struct.unpack_from(">II", payload)
                if status != 0 or last < sid:
                    raise ConnectionError(f"GOAWAY status {status}: {payload[8:].decode(errors='replace')}")


# ---------------------------------------------------------------- the server

class Server:
    def __init__(self, binary, workdir):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.log_path = os.path.join(workdir, "server.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--enable-test-service", "--log-level", "debug",
             "--storage", "sqlite:" + os.path.join(workdir, "skiff.sqlite")],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                c = Connection(self.port, timeout=2)
                c.call("/skiff.testing.v1.TestService/EmptyCall", b"")
                c.close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start; see " + self.log_path)

    def rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def mail_token(self, email):
        """The token of the last mail to `email`, read from the server's debug log."""
        with open(self.log_path, "rb") as log:
            text = log.read().decode(errors="replace")
        tokens = []
        # A mail body spans lines: "debug ...: mail.body=<text> mail.to=<address> [SkiffAccounts] Mail body".
        for body, to in re.findall(r"mail\.body=(.*?)\s+mail\.to=(\S+) \[SkiffAccounts\] Mail body", text, re.S):
            if to == email:
                tokens += re.findall(r"token: *([A-Za-z0-9_\-]{16,})", body)
        return tokens[-1] if tokens else None

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class Control(threading.Thread):
    """Makes an EmptyCall every 200 ms on one connection (reconnecting if needed)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop_flag = port, threading.Event()
        self.latencies, self.failures = [], 0
        self.lock = threading.Lock()

    def run(self):
        conn = None
        while not self.stop_flag.is_set():
            start = time.perf_counter()
            try:
                if conn is None:
                    conn = Connection(self.port, timeout=5)
                status, _, _ = conn.call("/skiff.testing.v1.TestService/EmptyCall", b"")
                ok = status == 0
            except (OSError, EOFError, ConnectionError, ValueError):
                ok = False
                if conn:
                    conn.close()
                conn = None
            with self.lock:
                if ok:
                    self.latencies.append(time.perf_counter() - start)
                else:
                    self.failures += 1
            self.stop_flag.wait(0.2)
        if conn:
            conn.close()

    def take(self):
        with self.lock:
            latencies, failures = sorted(self.latencies), self.failures
            self.latencies, self.failures = [], 0
        return latencies, failures


# ---------------------------------------------------------------- attacks

def attack_slow_reader(server, seconds, stop):
    huge = [(2, 0x7FFFFFFF), (3, 0x7FFFFFFF)]
    stream_request = field_bytes(1, field_varint(1, 1 << 20)) * 20  # 20 × ResponseParameters{size: 1 MiB}
    unary_request = field_varint(1, 4_000_000)

    def open_streaming():
        c = Connection(server.port, huge, rcvbuf=16384)
        c.sock.sendall(settings_ack() + b"".join(
            headers(2 * i + 1, "/skiff.testing.v1.TestService/StreamingOutputCall")
            + message(2 * i + 1, stream_request) for i in range(400)))
        return c

    def open_unary():
        c = Connection(server.port, rcvbuf=16384)
        c.sock.sendall(settings_ack() + b"".join(
            headers(2 * i + 1, "/skiff.testing.v1.TestService/UnaryCall")
            + message(2 * i + 1, unary_request) for i in range(1000)))
        return c

    slots = [open_streaming for _ in range(3)] + [open_unary for _ in range(3)]
    sockets = [make() for make in slots]
    replaced = 0
    deadline = time.time() + seconds
    # The server disconnects a client that reads nothing for its send-stall timeout: the attacker
    # notices (a write fails) and comes back with a new connection, so the pressure never stops.
    while time.time() < deadline and not stop.is_set():
        stop.wait(min(2, max(0, deadline - time.time())))
        for i, c in enumerate(sockets):
            try:
                c.sock.send(frame(PING, 0, 0, b"\0" * 8), socket.MSG_DONTWAIT)
            except BlockingIOError:
                pass  # its buffers are full, but it is still connected
            except OSError:
                c.close()
                try:
                    sockets[i] = slots[i]()
                    replaced += 1
                except OSError:
                    pass
    for c in sockets:
        c.close()
    return (f"6 connections, 1,200 streams of 20 MiB and 3,000 unary calls of 4 MB, never read; "
            f"{replaced} reconnects after the server dropped them")


def settings_ack():
    return frame(SETTINGS, 0x01, 0, b"")


def attack_half_open(server, seconds, stop):
    conns, refused = [], 0
    deadline = time.time() + seconds
    while time.time() < deadline and not stop.is_set() and len(conns) < 3000:
        try:
            c = Connection(server.port, timeout=5)
            c.sock.sendall(settings_ack() + b"".join(
                headers(2 * i + 1, "/skiff.testing.v1.TestService/UnaryCall") for i in range(100)))
            conns.append(c)
        except OSError:
            refused += 1
            time.sleep(0.05)
    stop.wait(max(0, deadline - time.time()))
    for c in conns:
        c.close()
    return f"{len(conns)} connections × 100 HEADERS-only streams held ({refused} connects failed)"


def attack_churn(server, seconds, stop):
    counts = [0, 0, 0]
    deadline = time.time() + seconds

    def loop(kind):
        while time.time() < deadline and not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                if kind == 0:
                    s.sendall(PREFACE + settings() + settings_ack())
                    s.recv(64)
                elif kind == 1:
                    s.sendall(PREFACE + settings() + frame(MESSAGE, 0, 2))  # a violation
                    while s.recv(4096):
                        pass
                else:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    while s.recv(4096):
                        pass
                s.close()
                counts[kind] += 1
            except OSError:
                time.sleep(0.01)

    threads = [threading.Thread(target=loop, args=(k % 3,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return f"{sum(counts):,} connections opened and closed ({counts[0]:,} clean, {counts[1]:,} GOAWAY, {counts[2]:,} bad preface)"


def sign_in(server):
    email = f"soak{int(time.time())}@campus.edu"
    password = "correct horse battery staple"
    c = Connection(server.port)
    status, msg, _ = c.call("/skiff.accounts.v1.Accounts/SignUp",
                            field_bytes(1, email) + field_bytes(2, password) + field_bytes(3, "Soak Test"))
    if status != 0:
        return None, f"SignUp: {status} {msg}"
    time.sleep(0.5)
    token = server.mail_token(email)
    if not token:
        return None, "no verification token in the server's log"
    status, msg, _ = c.call("/skiff.accounts.v1.Accounts/VerifyEmail", field_bytes(1, token))
    if status != 0:
        return None, f"VerifyEmail: {status} {msg}"
    status, msg, responses = c.call("/skiff.accounts.v1.Accounts/LogIn",
                                    field_bytes(1, email) + field_bytes(2, password))
    c.close()
    if status != 0 or not responses:
        return None, f"LogIn: {status} {msg}"
    return parse_fields(responses[0])[1][0].decode(), None


def attack_tag_bomb(server, seconds, stop):
    session, problem = sign_in(server)
    if session is None:
        return f"NOT RUN: could not sign in ({problem})"
    tags = b"".join(field_bytes(9, f"t{i}") for i in range(64_000))
    listing = field_bytes(3, "Winter jacket") + field_bytes(4, "Warm, barely worn.") + field_varint(5, 2500) \
        + field_varint(6, 1) + field_varint(7, 1) + tags
    create = field_bytes(1, listing)
    search = field_bytes(2, b"".join(field_bytes(5, f"tag{i}") for i in range(1000)))
    auth = [("authorization", "Bearer " + session)]
    outcomes, deadline = {}, time.time() + seconds

    def loop(kind):
        c = Connection(server.port, timeout=30)
        while time.time() < deadline and not stop.is_set():
            if kind == 0:
                status, msg, _ = c.call("/skiff.listings.v1.Listings/CreateListing", create, auth)
            else:
                status, msg, _ = c.call("/skiff.listings.v1.Listings/SearchListings", search)
            key = ("CreateListing" if kind == 0 else "SearchListings", status, msg[:60])
            outcomes[key] = outcomes.get(key, 0) + 1
        c.close()

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return "; ".join(f"{n:,} × {name} → status {status} \"{msg}\"" for (name, status, msg), n in outcomes.items())


ATTACKS = {
    "slow-reader": attack_slow_reader,
    "half-open": attack_half_open,
    "churn": attack_churn,
    "tag-bomb": attack_tag_bomb,
}


def percentile(values, p):
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(len(values) * p))] * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/skiff-server")
    parser.add_argument("--seconds", type=float, default=120, help="how long each attack runs")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="skiff-soak-") as workdir:
        server = Server(args.binary, workdir)
        control = Control(server.port)
        control.start()
        try:
            time.sleep(1)
            print(f"server pid {server.process.pid}, port {server.port}, RSS at start {server.rss_mb():.1f} MB")
            print(f"| attack | what ran | RSS before | RSS peak | RSS 10 s after | control calls | failed | p50 | p99 | max |")
            print(f"|---|---|---|---|---|---|---|---|---|---|")
            for name in args.attacks.split(","):
                control.take()
                before = server.rss_mb()
                peak = [before]
                stop = threading.Event()

                def sample():
                    while not stop.is_set():
                        peak[0] = max(peak[0], server.rss_mb())
                        stop.wait(0.1)

                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                summary = ATTACKS[name](server, args.seconds, threading.Event())
                time.sleep(10)
                stop.set()
                sampler.join()
                after = server.rss_mb()
                latencies, failures = control.take()
                print(f"| {name} | {summary} | {before:.0f} MB | {peak[0]:.0f} MB | {after:.0f} MB | "
                      f"{len(latencies)} | {failures} | {percentile(latencies, 0.5):.2f} ms | "
                      f"{percentile(latencies, 0.99):.2f} ms | {percentile(latencies, 1.0):.2f} ms |", flush=True)
                if server.process.poll() is not None:
                    print("THE SERVER DIED", file=sys.stderr)
                    return 1
        finally:
            control.stop_flag.set()
            control.join(timeout=10)
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
