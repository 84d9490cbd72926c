#!/usr/bin/env python3
"""Knock on every port of a range the way a hostile or confused peer would: garbage bytes,
a wrong wire version, a hello to the wrong rank, a hello followed by a forged proof, and an
oversized frame. Each connection must be refused without harming the job."""
import os
import socket
import struct
import sys

MAGIC = b"FRY\x01"
HELLO, AUTH = 16, 18


def header(kind, src, dst, length, version=1, seq=0):
    return struct.pack("<4sBBHIIIiQQ", MAGIC, version, kind, 0, src, dst, 0, 0, seq, length)


def knock(port, payload, read_reply=False, then=None):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        return False
    try:
        s.sendall(payload)
        if read_reply:
            try:
                s.recv(4096)
            except OSError:
                pass
        if then:
            try:
                s.sendall(then)
                s.recv(4096)
            except OSError:
                pass
    except OSError:
        pass
    finally:
        s.close()
    return True


def main():
    lo, hi, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    hit = 0
    for port in range(lo, hi + 1):
        if not knock(port, b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64)):
            continue
        hit += 1
        knock(port, header(HELLO, 0, 0, 32, version=9) + os.urandom(32))
        knock(port, header(1, 0, 1, 1 << 40))
        for dst in range(size):
            src = (dst + 1) % size
            forged = header(AUTH, src, dst, 32) + os.urandom(32)
            knock(port, header(HELLO, src, dst, 32) + os.urandom(32), read_reply=True, then=forged)
    print(f"attack: knocked on {hit} listening ports")
    return 0 if hit >= size else 1


if __name__ == "__main__":
    sys.exit(main())
