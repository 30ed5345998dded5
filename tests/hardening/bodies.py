"""Hostile HTTP clients on loopback: an over-size body pushed at a server over a raw socket
(declared or chunked), slow clients that hold connections open, and a process guessing the
dashboard's admin token. Shared by test_body_limits.py, e2e/test_dashboard.py and
bench/hostile_health.py."""

from __future__ import annotations

import json
import socket
import threading
import time

MIB = 1024 * 1024
DECLARED = 200 * 1000 * 1000


def rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def push(port: int, head: str, chunked: bool, total: int) -> tuple[int, dict | str, int]:
    """Send ``head`` then up to ``total`` body bytes (chunked framing or plain), reading the
    answer in a thread meanwhile (it comes before the server would read the body). Returns the
    status, the parsed body and how many body bytes the server took before it stopped taking."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    got = bytearray()

    def reader() -> None:
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    return
                got.extend(data)
                head_end = got.find(b"\r\n\r\n")
                if head_end >= 0:
                    headers = got[:head_end].decode("latin-1").lower()
                    length = next(
                        (int(h.split(":")[1]) for h in headers.split("\r\n") if h.startswith("content-length:")), None
                    )
                    if length is not None and len(got) >= head_end + 4 + length:
                        return
        except OSError:
            return

    t = threading.Thread(target=reader)
    t.start()
    sent = 0
    piece = b"x" * 65536
    try:
        sock.sendall(head.encode("latin-1"))
        sock.settimeout(3)  # a server that stopped reading: the send blocks, then times out
        while sent < total and t.is_alive():
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
    except OSError:
        pass
    t.join(15)
    sock.close()
    text = bytes(got).decode("utf-8", errors="replace")
    assert "\r\n\r\n" in text, f"no answer after {sent:,} body bytes: {text[:200]!r}"
    status_line, _, rest = text.partition("\r\n")
    headers, body = rest.split("\r\n\r\n", 1)
    length = next(
        (int(h.split(":")[1]) for h in headers.lower().split("\r\n") if h.startswith("content-length:")), None
    )
    body = body if length is None else bytes(got).split(b"\r\n\r\n", 1)[1][:length].decode("utf-8", "replace")
    try:
        parsed: dict | str = json.loads(body)
    except ValueError:
        parsed = body
    return int(status_line.split()[1]), parsed, sent


def slow_clients(port: int, count: int, seconds: float, stop: threading.Event | None = None) -> int:
    """``count`` connections to 127.0.0.1:``port`` that each send an unfinished request head and
    then one header line a second, for ``seconds`` (or until ``stop``); then all are closed.
    Returns how many connections were opened."""
    socks = []
    try:
        for _ in range(count):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
                s.sendall(f"POST /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n".encode())
                socks.append(s)
            except OSError:
                break
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end and not (stop is not None and stop.is_set()):
            time.sleep(1.0)
            i += 1
            for s in socks:
                try:
                    s.send(f"X-Slow-{i}: {i}\r\n".encode())
                except OSError:
                    pass
        return len(socks)
    finally:
        for s in socks:
            s.close()


# Another local process guessing admin tokens for a bounded time: 3 threads on keep-alive
# connections, 1 opening a new connection per guess. Prints what it got as JSON.
GUESSER = r"""
import json, sys, threading, time
import httpx
base, seconds = sys.argv[1], float(sys.argv[2])
out = {"tries": 0, "refused": 0, "other": [], "keepalive_waits": []}
lock = threading.Lock()
end = time.monotonic() + seconds
def guess(k):
    fresh, client, i = k == 0, None, 0
    while time.monotonic() < end:
        if client is None or fresh:
            client = client.close() if client else None
            client = httpx.Client(base_url=base, timeout=30)
        t0 = time.monotonic()
        r = client.post("/login", data={"token": f"wrong-guess-{k}-{i}"}, headers={"Origin": base},
                        follow_redirects=False)
        with lock:
            out["tries"] += 1
            if r.status_code == 303 and r.headers.get("location") == "/?msg=wrong_token":
                out["refused"] += 1
            else:
                out["other"].append([r.status_code, r.headers.get("location")])
            if not fresh:
                out["keepalive_waits"].append(round(time.monotonic() - t0, 2))
        i += 1
    client.close()
threads = [threading.Thread(target=guess, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(out))
"""
