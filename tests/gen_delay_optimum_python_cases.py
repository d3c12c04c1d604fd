"""Writes crates/mp/src/receiver/delay_optimum_python_cases.toml: the (3.10) delay-minimisation
problem on fixed inputs with the rates and bound rove.models.mptcp_delay.minimize_delay gives.
R-TSC's Rust solver must agree to 1e-9 relative (crates/mp/src/receiver/delay_optimum.rs,
solver_equals_the_python_model); tests/test_mptcp_delay_models.py checks that the Python model
still gives these values.

    .venv/bin/python tests/gen_delay_optimum_python_cases.py

The summary's section 3.5 worked vectors first (MSS 1440 B), then seeded random cases: 1 to 4
subflows, C_a^2 from 0.5 to 8, demand from 5 % to 95 % of the total capacity.
"""

import random
from pathlib import Path

from rove.models import mptcp_delay as md

OUT = Path(__file__).resolve().parent.parent / "crates/mp/src/receiver/delay_optimum_python_cases.toml"
HEADER = """\
# The (3.10) delay-minimisation problem on fixed inputs, with what the model library's
# rove.models.mptcp_delay.minimize_delay gives (x, packets/s; bound, s). Rust's
# receiver::delay_optimum::minimize_delay must agree to 1e-9 relative
# (crates/mp/src/receiver/delay_optimum.rs, test solver_equals_the_python_model), and
# tests/test_mptcp_delay_models.py checks that Python still does. Rates in packets/s, times
# in s. Written by tests/gen_delay_optimum_python_cases.py; change it only by running that script.
"""


def cases():
    out = []

    def add(name, c, tp, f, ca2=1.0):
        o = md.minimize_delay(c, tp, f, ca2=ca2)
        out.append(dict(name=name, c=[float(v) for v in c], tp=[float(v) for v in tp], f=float(f),
                        ca2=float(ca2), x=[float(v) for v in o.x], bound=float(o.bound)))

    for c1 in (15.0, 12.0, 8.0):
        add(f"section 3.5 (40, {c1:g}) Mbit/s", md.mbps_to_pps([40.0, c1]), [0.030, 0.015], md.mbps_to_pps(35.85))
    rng = random.Random(18)
    for i in range(24):
        n = rng.choice([1, 2, 2, 3, 4])
        c = [rng.uniform(50, 5000) for _ in range(n)]
        tp = [rng.uniform(0.005, 0.2) for _ in range(n)]
        f = rng.uniform(0.05, 0.95) * sum(c)
        add(f"random {i}", c, tp, f, rng.choice([0.5, 1.0, 1.0, 2.0, 8.0]))
    return out


def fmt(v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, str):
        return '"' + v + '"'
    raise TypeError(v)


def main():
    lines = [HEADER]
    for case in cases():
        lines.append("[[case]]")
        lines.extend(f"{k} = {fmt(v)}" for k, v in case.items())
        lines.append("")
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
