#!/usr/bin/env python3
"""A stand-in for ``rove-traffic`` used by the kernel-backend tests until the Rust traffic
generator is on the branch. It follows the same command-line contract (a subset):

    kernel_traffic_stub.py server --bind IP:PORT
    kernel_traffic_stub.py client --connect IP:PORT --cc NAME [--bytes N | --duration S]
                                  [--sample-ms MS] --out FILE.jsonl

and writes the same JSONL (TCP_INFO samples, then a ``final`` line). Test-only code.
"""

import json
import socket
import struct
import sys
import threading
import time

CA_STATES = ["open", "disorder", "cwr", "recovery", "loss"]


def opt(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def addr(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


def server(argv):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr(opt(argv, "--bind")))
    s.listen(16)

    def drain(c):
        while c.recv(1 << 16):
            pass
        c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def tcp_info(sock, cc, t_s):
    b = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    b = b + bytes(232 - len(b))
    ca = b[1]
    unacked, sacked, lost, retrans = struct.unpack_from("<4I", b, 24)
    rtt_us, _, ssthresh, cwnd = struct.unpack_from("<4I", b, 68)
    total_retrans, = struct.unpack_from("<I", b, 100)
    pacing, _, acked, _ = struct.unpack_from("<4Q", b, 104)
    min_rtt, = struct.unpack_from("<I", b, 148)
    delivery, = struct.unpack_from("<Q", b, 160)
    sent, = struct.unpack_from("<Q", b, 200)
    return {"t_s": t_s, "cwnd_pkts": cwnd, "ssthresh_pkts": min(ssthresh, 2**31 - 1),
            "inflight_pkts": max(0, unacked - sacked - lost + retrans),
            "pacing_rate_bps": pacing * 8 if pacing < 2**63 else None,
            "delivery_rate_bps": delivery * 8, "srtt_ms": rtt_us / 1000,
            "min_rtt_ms": min_rtt / 1000, "bytes_acked": acked, "bytes_sent": sent,
            "retrans_segs": total_retrans, "ca_state": CA_STATES[ca] if ca < 5 else str(ca),
            "cc": cc}


def client(argv):
    cc = opt(argv, "--cc")
    size = opt(argv, "--bytes")
    duration = float(opt(argv, "--duration", "0") or 0)
    sample_s = float(opt(argv, "--sample-ms", "10")) / 1000
    out = open(opt(argv, "--out"), "w")
    t0 = time.monotonic()
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.connect(addr(opt(argv, "--connect")))
    done = threading.Event()

    def sample():
        while not done.is_set():
            out.write(json.dumps(tcp_info(s, cc, time.monotonic() - t0)) + "\n")
            time.sleep(sample_s)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    chunk = bytes(1 << 16)
    left = int(size) if size else None
    fct = None
    try:
        while True:
            if left is not None and left <= 0:
                break
            if left is None and time.monotonic() - t0 >= duration:
                break
            n = s.send(chunk if left is None else chunk[:min(left, len(chunk))])
            if left is not None:
                left -= n
        if left is not None:  # wait until every byte is acknowledged
            while tcp_info(s, cc, 0)["bytes_acked"] < int(size):
                time.sleep(0.001)
            fct = time.monotonic() - t0
    finally:
        done.set()
        th.join()
        acked = tcp_info(s, cc, 0)["bytes_acked"]
        out.write(json.dumps({"final": True, "fct_s": fct, "bytes_acked": acked}) + "\n")
        out.close()
        s.close()


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    {"server": server, "client": client}[sys.argv[1]](sys.argv[2:])
