"""Writes crates/mp/src/sched/tsc_python_cases.toml: MPTCP-TSC's allocator (2.14)-(2.17) on fixed
inputs with the allocation rove.models.mptcp_delay.tsc_allocate gives. The Rust scheduler's
allocator must give the same (crates/mp/src/sched/tsc.rs, allocator_equals_the_python_model);
tests/test_mptcp_delay_models.py checks that the Python model still does.

    .venv/bin/python tests/gen_tsc_python_cases.py

The hand-made cases first (those of test_mptcp_delay_models.py's allocator tests), then seeded
random ones: 1 to 4 paths, slow start on some, x^min, several thresholds and hop counts.
"""

import random
from pathlib import Path

from rove.models import mptcp_delay as md

OUT = Path(__file__).resolve().parent.parent / "crates/mp/src/sched/tsc_python_cases.toml"
HEADER = """\
# MPTCP-TSC's allocator (2.14)-(2.17) on fixed inputs, with the allocation the model library
# rove.models.mptcp_delay.tsc_allocate gives (x, packets/s). Rust's sched::tsc::allocate must
# give the same (crates/mp/src/sched/tsc.rs, test allocator_equals_the_python_model), and
# tests/test_mptcp_delay_models.py checks that Python still does. Rates in packets/s, times
# in s. Written by tests/gen_tsc_python_cases.py (hand-made cases, then seeded random ones);
# change it only by running that script.
"""


def cases():
    out = []

    def add(name, f_hat, c_hat, rtt, rtt_min, cost, cwnd, slow_start, d_net_thr,
            d_send_thr=0.1, x_min=0.0, hops=5.0, mru=True):
        n = len(c_hat)
        each = lambda v: v if isinstance(v, list) else [v] * n  # noqa: E731
        x = md.tsc_allocate(f_hat, c_hat, rtt, rtt_min, cost, cwnd, slow_start, d_net_thr,
                            d_send_thr=d_send_thr, x_min=x_min, hops=hops, min_rate_for_unassigned=mru)
        out.append(dict(name=name, f_hat=f_hat, c_hat=c_hat, rtt=rtt, rtt_min=rtt_min, cost=cost,
                        cwnd=cwnd, slow_start=each(slow_start), d_net_thr=d_net_thr,
                        d_send_thr=d_send_thr, x_min=each(x_min), hops=each(hops),
                        min_rate_for_unassigned=mru, x=[float(v) for v in x]))

    lw = dict(c_hat=[1500.0, 300.0], rtt=[0.05, 0.05], rtt_min=[0.04, 0.02], cost=[10.0, 1.0], d_net_thr=0.1)
    big = [1000.0, 1000.0]
    add("wifi filled to its bound, LTE the rest", 400.0, **lw, cwnd=big, slow_start=False)
    add("small demand on WiFi alone", 200.0, **lw, cwnd=big, slow_start=False)
    add("WiFi window-limited", 400.0, **lw, cwnd=[1000.0, 5.0], slow_start=False)
    add("WiFi in slow start drops its delay bound", 400.0, **lw, cwnd=big, slow_start=[False, True])
    add("x_min probes the unassigned LTE path", 200.0, **lw, cwnd=big, slow_start=False, x_min=5.0)
    add("printed step 4: unassigned get 0", 200.0, **lw, cwnd=big, slow_start=False, x_min=5.0, mru=False)
    add("path that cannot meet d_thr gets nothing", 400.0, [1500.0, 50.0], [0.05, 0.2], [0.04, 0.1],
        [10.0, 1.0], big, False, 0.05)

    rng = random.Random(3)
    for i in range(24):
        n = rng.choice([1, 2, 2, 3, 4])
        c = [rng.uniform(20, 3000) for _ in range(n)]
        rmin = [rng.uniform(0.005, 0.15) for _ in range(n)]
        rtt = [r + rng.uniform(0.0001, 0.3) for r in rmin]
        cost = [float(rng.choice([1, 2, 5, 10, 10])) for _ in range(n)]
        cwnd = [float(rng.randint(1, 400)) for _ in range(n)]
        ss = [rng.random() < 0.25 for _ in range(n)]
        d_net = rng.choice([0.05, 0.1, 0.2, 0.5])
        d_send = rng.choice([0.05, 0.1, 0.2])
        x_min = rng.choice([0.0, 0.0, 3.0, 20.0])
        hops = [float(rng.choice([1, 3, 5, 8])) for _ in range(n)]
        f = rng.uniform(0, 3000)
        add(f"random {i}", f, c, rtt, rmin, cost, cwnd, ss, d_net, d_send, [x_min] * n, hops, rng.random() < 0.7)
    return out


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, str):
        return '"' + v + '"'
    raise TypeError(v)


def main():
    lines = [HEADER]
    for c in cases():
        lines.append("[[case]]")
        lines += [f"{k} = {fmt(v)}" for k, v in c.items()]
        lines.append("")
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
