"""Hostile clients at a live relay (`ferry proxy`) while a job runs through it.

Usage: hostile_relay.py HOST PORT SITE_KEY_FILE

Each attack must end in the relay closing the connection (after a Denied frame where the
protocol has one), never in a relayed connection. Prints one line per attack and a summary;
exits 1 if any attack was not refused. Bounded: every connection has a timeout, and the
flood is 1,000 connections to this one address."""
import os, socket, struct, sys, time

HOST, PORT = sys.argv[1], int(sys.argv[2])
MAGIC, VERSION = b"FRLY", 1
K_HELLO, K_REQUEST, K_ESTABLISHED, K_DENIED, K_CONTROL_AUTH, K_ACK = 1, 2, 3, 4, 16, 20


def frame(kind, payload):
    return MAGIC + bytes([VERSION, kind]) + struct.pack("<H", len(payload)) + payload


def connect():
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.settimeout(10)
    return s


def read_frame(s):
    head = b""
    while len(head) < 8:
        got = s.recv(8 - len(head))
        if not got:
            return None
        head += got
    n = struct.unpack("<H", head[6:8])[0]
    body = b""
    while len(body) < n:
        got = s.recv(n - len(body))
        if not got:
            return None
        body += got
    return head[5], body


def refused(s):
    """True when the relay ends the conversation: EOF or reset, perhaps after a Denied/Ack
    frame; False if it says Established or keeps the connection open past the timeout."""
    try:
        while True:
            f = read_frame(s)
            if f is None:
                return True
            if f[0] == K_ESTABLISHED:
                return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    finally:
        s.close()


def hello(s):
    f = read_frame(s)
    assert f is not None and f[0] == K_HELLO, "no hello from the relay"
    return f[1]


results = []


def attack(name, fn):
    try:
        ok = fn()
    except Exception as e:  # the relay may reset a connection mid-send: that is a refusal
        ok = isinstance(e, (ConnectionResetError, BrokenPipeError))
    results.append(ok)
    print(("refused " if ok else "ACCEPTED ") + name, flush=True)


def garbage():
    s = connect()
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    return refused(s)


def oversized():
    s = connect()
    hello(s)
    s.sendall(MAGIC + bytes([VERSION, K_REQUEST]) + struct.pack("<H", 65535) + os.urandom(600))
    return refused(s)


def request(job, frm, to):
    s = connect()
    hello(s)
    s.sendall(frame(K_REQUEST, job + struct.pack("<II", frm, to) + os.urandom(32) + os.urandom(32)))
    return refused(s)


def unknown_job():
    return request(os.urandom(16), 0, 2)


def forged_member():
    # A plausible request whose proof was made without the job's key.
    return request(b"\0" * 16, 4, 2)


def wrong_site_key():
    s = connect()
    hello(s)
    s.sendall(frame(K_CONTROL_AUTH, os.urandom(32) + os.urandom(32)))
    return refused(s)


def silent():
    # Connects and never speaks: dropped after the relay's handshake deadline.
    s = connect()
    s.settimeout(15)
    try:
        hello(s)
        return refused(s)
    except socket.timeout:
        return False


def flood():
    socks = []
    t0 = time.monotonic()
    for _ in range(1000):
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((HOST, PORT))
            socks.append(s)
        except OSError:
            pass
        if len(socks) % 100 == 0:
            time.sleep(0.01)
    time.sleep(0.5)
    for s in socks:
        try:
            s.send(b"\xff" * 8)
        except OSError:
            pass
        s.close()
    print("flood: %d connections in %.2f s" % (len(socks), time.monotonic() - t0), flush=True)
    # The relay still answers a newcomer at once.
    s = connect()
    try:
        hello(s)
        s.sendall(b"junk")
        return refused(s)
    except socket.timeout:
        return False


def unknown_kind():
    s = connect()
    s.sendall(MAGIC + bytes([VERSION, 99]) + b"\0\0")
    return refused(s)


attack("garbage (an HTTP request)", garbage)
attack("an oversized frame", oversized)
attack("a request naming an unknown job", unknown_job)
attack("a request with a forged proof", forged_member)
attack("a control connection with a wrong site key", wrong_site_key)
attack("an unknown frame kind", unknown_kind)
attack("a flood of 1,000 connections", flood)
attack("a client that never speaks", silent)
print("%d of %d attacks refused" % (sum(results), len(results)))
sys.exit(0 if all(results) else 1)
