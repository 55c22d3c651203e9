#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""memcached load from the host for make bench-tlb's server-sized run.

The guest's memcached (workload memcached_host, scripts/guest/workloads)
and this program take turns through one key, lm_phase, on that server:

  guest: ready          this program stores ITEMS values of VALUE bytes
                        (the item set), then sets loaded
  guest: measure.R      (R from 0, the warm-up) this program starts
                        CONNS connections, each a closed loop of gets of
                        random stored keys (a tenth sets), sets
                        running.R, and keeps the load on
  guest: stop.R         (the guest's window is over) the load stops; one
                        JSON line of the run goes to OUT; done.R is set
  guest: end            this program exits

Every wait is bounded (--timeout seconds of host time each); a server
error, a short reply or a timeout ends it with exit 1 and says which.

usage: mcload.py PORT OUT [--items N] [--value BYTES] [--conns N]
                          [--timeout SECS]
"""
import argparse
import json
import math
import random
import socket
import sys
import threading
import time


class Conn:
    def __init__(self, port, timeout):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise ConnectionError("the server closed the connection")
            self.buf += d
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def exactly(self, n):
        while len(self.buf) < n:
            d = self.s.recv(max(65536, n - len(self.buf)))
            if not d:
                raise ConnectionError("the server closed the connection")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def set(self, key, value):
        self.s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
        r = self.line()
        if r != b"STORED":
            raise IOError("set %s: %r" % (key.decode(), r))

    def get(self, key):
        """The value, or None for a miss."""
        self.s.sendall(b"get %s\r\n" % key)
        r = self.line()
        if r == b"END":
            return None
        p = r.split()
        if len(p) != 4 or p[0] != b"VALUE":
            raise IOError("get %s: %r" % (key.decode(), r))
        v = self.exactly(int(p[3]) + 2)
        if v[-2:] != b"\r\n":
            raise IOError("get %s: the value is not %s bytes" % (key.decode(), p[3].decode()))
        v = v[:-2]
        if self.line() != b"END":
            raise IOError("get %s: no END" % key.decode())
        return v


class Ctl:
    """The connection that reads and sets lm_phase, opened again when QEMU's
    user network resets it (at most 20 times)."""

    def __init__(self, port, timeout):
        self.port, self.timeout, self.c, self.lost = port, timeout, None, 0

    def _do(self, f):
        while True:
            try:
                if self.c is None:
                    self.c = Conn(self.port, 30)
                return f(self.c)
            except (ConnectionError, socket.timeout):
                self.c = None
                self.lost += 1
                if self.lost > 20:
                    raise
                time.sleep(1)

    def get(self, key):
        return self._do(lambda c: c.get(key))

    def set(self, key, value):
        return self._do(lambda c: c.set(key, value))


def wait_phase(c, want, timeout):
    """Poll lm_phase until it is one of want; the value."""
    end = time.time() + timeout
    while time.time() < end:
        v = c.get(b"lm_phase")
        if v is not None and v.decode().strip() in want:
            return v.decode().strip()
        time.sleep(0.2)
    raise TimeoutError("lm_phase never became %s in %ds" % ("/".join(sorted(want)), timeout))


def key(i):
    return b"item:%08d" % i


def preload(port, items, value, timeout, nconn=8):
    """Store items values over nconn connections; the seconds it took."""
    t0 = time.time()
    errs = []

    def worker(k):
        try:
            c = Conn(port, timeout)
            for i in range(k, items, nconn):
                c.set(key(i), value)
        except Exception as e:  # noqa: BLE001 - reported below
            errs.append(str(e))
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(nconn)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise IOError("preload: %s" % errs[0])
    return time.time() - t0


def run(port, items, value, conns, ctl, r, timeout):
    """The load of run r, from measure.r to stop.r: its figures."""
    stop = threading.Event()
    lat, errs = [], []
    counts = {"get": 0, "set": 0, "miss": 0}
    lock = threading.Lock()

    def worker(seed):
        rnd = random.Random(seed)
        mine, n = [], {"get": 0, "set": 0, "miss": 0, "reconnect": 0}
        c = None
        while not stop.is_set():
            try:
                if c is None:
                    # A short timeout: a stopped run must not wait long.
                    c = Conn(port, 30)
                one(c, rnd, n, mine)
            except (ConnectionError, socket.timeout) as e:
                # A connection QEMU's user network reset: counted, and
                # opened again, as a client would; too many end the run.
                if c is not None:
                    c.s.close()
                c = None
                n["reconnect"] += 1
                if n["reconnect"] > 20:
                    errs.append("connection lost 20 times: %s" % e)
                    break
            except Exception as e:  # noqa: BLE001 - reported below
                errs.append(str(e))
                break
        with lock:
            lat.extend(mine)
            for x in n:
                counts[x] = counts.get(x, 0) + n[x]

    def one(c, rnd, n, mine):
        k = key(rnd.randrange(items))
        t = time.perf_counter()
        if rnd.random() < 0.1:
            c.set(k, value)
            n["set"] += 1
        else:
            v = c.get(k)
            n["get"] += 1
            if v is None:
                n["miss"] += 1
            elif len(v) != len(value):
                raise IOError("get %s: %d bytes, stored %d" % (k.decode(), len(v), len(value)))
        mine.append(time.perf_counter() - t)

    ts = [threading.Thread(target=worker, args=(1000 * r + i,)) for i in range(conns)]
    t0 = time.time()
    for t in ts:
        t.start()
    ctl.set(b"lm_phase", b"running.%d" % r)
    wait_phase(ctl, {"stop.%d" % r}, timeout)
    stop.set()
    for t in ts:
        t.join()
    secs = time.time() - t0
    if errs:
        raise IOError("run %d: %s" % (r, errs[0]))
    lat.sort()
    ops = counts["get"] + counts["set"]

    def pct(p):
        """Nearest rank: the smallest latency with p of them at or below it."""
        return 1e3 * lat[max(0, math.ceil(p * len(lat)) - 1)] if lat else None
    return {"run": r, "host_secs": round(secs, 2), "ops": ops,
            "ops_per_host_sec": round(ops / secs, 1) if secs else None,
            "gets": counts["get"], "sets": counts["set"], "misses": counts["miss"],
            "reconnects": counts.get("reconnect", 0),
            "p50_ms": pct(0.5), "p99_ms": pct(0.99), "conns": conns}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("port", type=int)
    ap.add_argument("out")
    ap.add_argument("--items", type=int, default=524288)
    ap.add_argument("--value", type=int, default=4096)
    ap.add_argument("--conns", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=3600)
    a = ap.parse_args()
    value = bytes(random.Random(1).randrange(33, 127) for _ in range(a.value))
    end = time.time() + a.timeout
    ctl = Ctl(a.port, a.timeout)
    while True:
        try:
            wait_phase(ctl, {"ready"}, a.timeout)
            break
        except (OSError, IOError):
            ctl = Ctl(a.port, a.timeout)
            if time.time() > end:
                sys.exit("mcload: memcached on 127.0.0.1:%d never said ready in %ds"
                         % (a.port, a.timeout))
            time.sleep(1)
    out = open(a.out, "w")
    try:
        secs = preload(a.port, a.items, value, a.timeout)
        out.write(json.dumps({"preload_items": a.items, "value_bytes": a.value,
                              "preload_host_secs": round(secs, 1)}) + "\n")
        out.flush()
        print("mcload: %d items of %d bytes stored in %.0fs" % (a.items, a.value, secs), flush=True)
        ctl.set(b"lm_phase", b"loaded")
        while True:
            p = wait_phase(ctl, {"end"} | {"measure.%d" % r for r in range(0, 100)}, a.timeout)
            if p == "end":
                break
            r = int(p.split(".")[1])
            res = run(a.port, a.items, value, a.conns, ctl, r, a.timeout)
            out.write(json.dumps(res) + "\n")
            out.flush()
            print("mcload: run %d: %d ops, %d misses, p50 %.2f ms, p99 %.2f ms (host time)"
                  % (r, res["ops"], res["misses"], res["p50_ms"] or 0, res["p99_ms"] or 0), flush=True)
            ctl.set(b"lm_phase", b"done.%d" % r)
    except (OSError, IOError, TimeoutError) as e:
        sys.exit("mcload: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
