#!/usr/bin/env python3
"""Measure TCP throughput between two emulated nodes (netns_cluster.sh).

usage: tcp_rate.py FROM_NS TO_NS TO_ADDR [MEGABYTES]
Starts a receiver in TO_NS listening on TO_ADDR, sends MEGABYTES (default
200) from FROM_NS over one TCP connection, and prints the rate the receiver
saw from the first byte to the last, in Gbit/s. The receiver tells the
sender its port on stdout, so nothing waits on a guess of time.
"""
import subprocess
import sys

RECV = r'''
import socket, sys, time
s = socket.create_server((sys.argv[1], 0))
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
got, t0 = 0, None
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    if t0 is None:
        t0 = time.perf_counter()
    got += len(b)
dt = time.perf_counter() - t0
print(f"{got} {dt}", flush=True)
'''

SEND = r'''
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
block = b"x" * (1 << 20)
for _ in range(int(sys.argv[3])):
    c.sendall(block)
c.close()
'''


def main():
    src, dst, addr = sys.argv[1:4]
    mb = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    recv = subprocess.Popen(['ip', 'netns', 'exec', dst, sys.executable, '-c',
                             RECV, addr], stdout=subprocess.PIPE, text=True)
    port = recv.stdout.readline().strip()
    subprocess.run(['ip', 'netns', 'exec', src, sys.executable, '-c', SEND,
                    addr, port, str(mb)], check=True)
    got, dt = recv.stdout.readline().split()
    recv.wait()
    gbps = int(got) * 8 / float(dt) / 1e9
    print(f"{src} -> {dst}: {int(got) >> 20} MiB in {float(dt):.3f} s = "
          f"{gbps:.3f} Gbit/s")


if __name__ == '__main__':
    main()
