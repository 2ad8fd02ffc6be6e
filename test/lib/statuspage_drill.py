#!/usr/bin/env python3
"""Drives `frenzy-sched serve --http` through the status-page tests.

usage: statuspage_drill.py MODE --sched=BIN --cluster=C.yaml --model=M.onnx
                           --data=TOKENS --work=DIR [--chromium=BIN]
Both modes start the service with --http=127.0.0.1:0 on the two-"GPU" CPU
cluster, run one 2-step job to its end (history for the timeline), then
two long jobs (running, both checkpointed) and a short one (queued behind
them), and read the port the service wrote to STATE/http.port.
MODE http: the JSON document over HTTP and over the Unix socket, HTTP
  refusals, and a silent HTTP client that must not stall the service.
MODE page: headless Chromium takes a screenshot of the page (its PNG is
  decoded here: dimensions, and the running jobs' colours drawn) and dumps
  its DOM (the running and queued jobs listed).
Every wait is on state the service reports, with a deadline.
"""
import collections
import colorsys
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import serve_drill as sd  # noqa: E402

WIDTH, HEIGHT = 1200, 900


def log_of(job):
    return os.path.join(sd.status()[job]["dir"], "log")


def checkpointed(job):
    path = log_of(job)
    return os.path.exists(path) and "checkpoint: step 1 written" in \
        open(path).read()


def start_jobs():
    """The service with one finished job, two running, one queued."""
    # A long --http-timeout: the silent client below holds the HTTP thread
    # until it leaves, not until a clock runs out.
    svc = sd.serve("--http=127.0.0.1:0", "--http-timeout=60000")
    port = int(open(os.path.join(sd.STATE, "http.port")).read())
    first = sd.submit(sd.MODEL, "--steps=2", f"--data={sd.DATA}")
    sd.wait_for("job 1 to end", sd.all_final)
    long1 = sd.submit(sd.MODEL, "--steps=5000", f"--data={sd.DATA}")
    long2 = sd.submit(sd.MODEL, "--steps=5000", f"--data={sd.DATA}")
    queued = sd.submit(sd.MODEL, "--steps=2", f"--data={sd.DATA}")
    for j in (long1, long2):
        sd.wait_for(f"job {j} to checkpoint step 1",
                    lambda j=j: sd.status()[j]["state"] == "running" and
                    checkpointed(j))
    print(f"jobs: {first} {sd.status()[first]['state']}, {long1} and "
          f"{long2} running, {queued} {sd.status()[queued]['state']}")
    return svc, port, (first, long1, long2, queued)


def stop(svc, jobs):
    for j in jobs:
        sd.client("cancel", str(j))
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    gone = not os.path.exists(os.path.join(sd.STATE, "http.port"))
    print(f"stopped: exit {svc.returncode}, http.port removed: {gone}")


def get(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def describe(doc, where):
    run = doc["running"]
    gpus = [g for r in run for g in r["gpus"]]
    predicted = all(r["predicted_finish"] and
                    r["predicted_finish"] > r["started"] and
                    r["checkpoint_step"] >= 1 for r in run)
    print(f"{where}: running {[r['id'] for r in run]} on "
          f"{len(set(gpus))} distinct GPUs {sorted(gpus)}, predicted finish "
          f"after start: {predicted}; queue {[q['id'] for q in doc['queue']]}"
          f"; counts {doc['counts']}")
    spans = sorted((s["job"], s["gpu"], s["outcome"] or "running")
                   for s in doc["timeline"])
    print(f"{where}: timeline {spans}")


def http_mode():
    svc, port, jobs = start_jobs()
    status, ctype, body = get(port, "/status.json")
    print(f"GET /status.json: {status} {ctype}")
    describe(json.loads(body), "http")
    r = sd.client("status", "--page")
    if r.returncode:
        sys.exit("FAIL: status --page: " + r.stderr)
    describe(json.loads(r.stdout), "socket")
    status, ctype, body = get(port, "/")
    print(f"GET /: {status} {ctype}, {len(body)} bytes, "
          f"svg: {b'<svg id=timeline' in body}")
    for method, path in (("POST", "/"), ("GET", "/nope")):
        status, _, body = get(port, path, method)
        print(f"{method} {path}: {status} {body.decode().strip()}")
    # A client that connects and sends half a request holds the HTTP
    # thread (for up to --http-timeout), never the service: the socket
    # answers while that client still has no reply; once it leaves, the
    # page is served again.
    silent = socket.create_connection(("127.0.0.1", port))
    silent.sendall(b"GET / HT")
    r = sd.client("status", "--json")
    waiting = not select.select([silent], [], [], 0)[0]
    silent.close()
    status, _, _ = get(port, "/")
    print(f"silent HTTP client: status over the socket exit {r.returncode}"
          f" while it had no reply: {waiting}; after it left GET / {status}")
    stop(svc, jobs)


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB(A) PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], None
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        prev = prev or bytearray(stride)
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else
                                      b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def job_rgb(job):
    """StatusHtml.cpp's colour of a job: hsl(job*137 % 360, 60%, 55%)."""
    r, g, b = colorsys.hls_to_rgb((job * 137 % 360) / 360, 0.55, 0.60)
    return tuple(round(v * 255) for v in (r, g, b))


def page_mode():
    chromium = sd.arg("chromium")
    svc, port, jobs = start_jobs()
    url = f"http://127.0.0.1:{port}/"
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}"]
    png = os.path.join(sd.WORK, "status.png")
    t0 = time.monotonic()
    shot = subprocess.run(base + [f"--screenshot={png}", url],
                          capture_output=True, text=True, timeout=120)
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True,
                         text=True, timeout=120)
    t1 = time.monotonic()
    if shot.returncode or not os.path.exists(png):
        sys.exit("FAIL: chromium --screenshot: " + shot.stderr[-2000:])
    w, h, rows = png_pixels(png)
    size = os.path.getsize(png)
    print(f"screenshot: {w}x{h}, {'over' if size > 20000 else 'under'} "
          f"20 KB")
    colours = collections.Counter(px for row in rows for px in row)
    for j in jobs[:3]:
        want = job_rgb(j)
        n = sum(k for px, k in colours.items()
                if all(abs(p - q) <= 3 for p, q in zip(px, want)))
        # The swatch alone is 100 pixels; the timeline's boxes add more.
        print(f"job {j}: {'over' if n > 150 else 'under'} 150 pixels of "
              f"its colour")
    if dom.returncode:
        sys.exit("FAIL: chromium --dump-dom: " + dom.stderr[-2000:])
    html = dom.stdout

    def ids(table):
        m = re.search(rf'<table id="{table}">(.*?)</table>', html, re.S)
        return [int(i) for i in re.findall(r'data-job="(\d+)"',
                                           m.group(1))] if m else None
    boxes = sorted(set(int(i) for i in re.findall(
        r'<g class="span" data-job="(\d+)"', html)))
    print(f"dom: running {ids('running')}, queue {ids('queue')}, "
          f"timeline boxes for jobs {boxes}")
    sys.stderr.write(f"timing: chromium screenshot + dump-dom {t1 - t0:.1f}"
                     f" s, PNG decoded and counted {time.monotonic() - t1:.1f}"
                     f" s\n")
    stop(svc, jobs)


if __name__ == "__main__":
    {"http": http_mode, "page": page_mode}[sys.argv[1]]()
