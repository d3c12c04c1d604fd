"""The ``rove`` command line.

    rove run SCENARIO -o DIR [--seed N] [--set KEY=VALUE ...] [--quiet] [--backend sim|kernel]
    rove validate SCENARIO [--seed N] [--set KEY=VALUE ...]
    rove report DIR
    rove trace synth KIND -o FILE [--duration 60s] [--seed N] [--param KEY=VALUE ...]
    rove sweep SWEEP.toml -o DIR [--jobs N] [--ray ADDRESS|local] [--quiet]
    rove compare DIR_A DIR_B [DIR ...] [-o OUT]

Bad input of any kind (scenario errors, missing files, a directory that holds no results, a bad
option value) prints one line ``rove: error: ...`` on stderr and exits with status 2, never a
traceback. Ctrl-C exits with 130 and SIGTERM with 143; neither leaves a results directory behind.
Set ``ROVE_DEBUG=1`` to see the traceback of an unexpected internal error.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms at start-up)

if TYPE_CHECKING:  # annotations only
    from typing import Any, Sequence

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class CliError(Exception):
    """Bad input found by the CLI itself; the message is printed after ``rove: error: ``."""


class _Terminated(BaseException):
    """Raised from the SIGTERM handler so that clean-up (``finally``) runs."""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (``rove: error: ...``) with exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        hint = f" (see '{self.prog} --help')"
        if "expected one argument" in message:
            # argparse reads "-1s" as an option, not a value
            hint = (" (a value starting with '-' is written with '=', e.g. --duration=-1s;"
                    f" see '{self.prog} --help')")
        raise CliError(" ".join(message.split()) + hint)


# --------------------------------------------------------------------------------------------
# Option values


_AS_STRING = {"inf", "+inf", "-inf", "nan", "+nan", "-nan"}


def parse_value(text: str) -> Any:
    """A command-line value: TOML if it parses as a TOML value, else the text as a string.

    ``10Mbps`` -> ``"10Mbps"``, ``0.01`` -> ``0.01``, ``true`` -> ``True``,
    ``["6Mbps","24Mbps"]`` -> a list, ``'"quoted"'`` -> ``"quoted"``. ``inf`` and ``nan`` stay
    strings (``size = "inf"`` is a string in the scenario format).
    """
    if text.strip().lower() in _AS_STRING:
        return text.strip()
    from ._core import parse_toml_value  # the scenario's TOML parser; no Python TOML module

    value = parse_toml_value(text)
    return text if value is None else value


def _split_assignment(option: str, item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise CliError(f"{option} expects KEY=VALUE, got {item!r}")
    if not value.strip():
        raise CliError(f"{option} {key.strip()}: empty value (write KEY=VALUE)")
    return key.strip(), value.strip()


def _overrides(items: Sequence[str] | None) -> list[tuple[str, Any]]:
    return [(k, parse_value(v)) for k, v in (_split_assignment("--set", i) for i in items or [])]


# --------------------------------------------------------------------------------------------
# Commands


def _check_readable(path: str, what: str) -> None:
    """A one-line error for an input that is not a readable regular file of sane size (before
    loading the engine; rove/outputs.py)."""
    from .outputs import OutputError, check_input_file

    try:
        check_input_file(path, what)
    except OutputError as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"{path}: cannot read the {what} file: {e.strerror or e}") from None


def _check_out(out: str, kind: str, force: bool) -> Path:
    """``-o DIR`` checked before anything runs: never a directory rove did not write."""
    from .outputs import OutputError, check_output_dir

    try:
        return check_output_dir(out, kind, force=force)
    except OutputError as e:
        raise CliError(str(e)) from None


def _cmd_run(args) -> int:
    _check_readable(args.scenario, "scenario")
    import rove

    overrides = _overrides(args.set)
    if args.each:
        return _run_each(args, overrides)
    out = _check_out(args.out, "results", args.force)
    if args.backend == "kernel":
        if args.pcap:
            raise CliError("--pcap: the kernel backend does not write captures (run tcpdump in "
                           "its namespaces, or capture on the simulator)")
        return _run_kernel(args, out, overrides)
    progress = (not args.quiet) and sys.stderr.isatty()
    result = rove.run(args.scenario, out=out, seed=args.seed, progress=progress,
                      overrides=overrides, force=args.force, no_limit=args.no_limit,
                      pcap=args.pcap or ())
    if not args.quiet:
        _print_run_summary(result.summary, out)
    return 0


def _each_values(text: str) -> list:
    """``A,B,C`` -> ``["A", "B", "C"]`` (each read as a --set value); a TOML list is taken as
    it is (``["a,b", "c"]`` for values that hold commas)."""
    value = parse_value(text)
    if isinstance(value, list):
        return value
    return [parse_value(v.strip()) for v in text.split(",") if v.strip()]


def _run_each(args, overrides) -> int:
    """``rove run SCENARIO --each KEY=A,B ...``: the scenario once per value (per combination
    of several keys), as a sweep into DIR (resumable; ``rove report DIR`` compares them)."""
    from .sweeps import each_spec, run_spec

    if args.backend != "sim":
        raise CliError("--each runs on the simulator only (use one run per value with "
                       "--backend kernel)")
    if args.pcap:
        raise CliError("--pcap captures one run; with --each, capture the value you want with "
                       "a run of its own")
    each = [(k, _each_values(v)) for k, v in (_split_assignment("--each", i) for i in args.each)]
    spec = each_spec(args.scenario, each, fixed=overrides, seed=args.seed)
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    table, failures = run_spec(spec, args.out, log=log, no_limit=args.no_limit)
    if not args.quiet:
        from .sweep_report import scheme_table

        if table.num_rows:
            summary, _, _ = scheme_table(table.to_pandas())
            for _, r in summary.iterrows():
                print(f"  {r['panel']:<24} {r['scheme']:<12} goodput {r['goodput_mbps']:8.3f} Mbps"
                      f"  RTT mean {r['mean_rtt_ms']:7.1f} ms  p95 {r['p95_rtt_ms']:7.1f} ms")
        print(f"{len(set(table.column('point').to_pylist()))} runs -> {args.out} "
              f"(compare them: rove report {args.out})")
    return 1 if failures else 0


def _run_kernel(args, out: Path, overrides) -> int:
    """``rove run --backend kernel``: the scenario on real Linux TCP (python/rove/kernel.py)."""
    import rove
    from .kernel import KernelError, run_kernel

    try:
        result = run_kernel(args.scenario, out, seed=args.seed,
                            overrides=[(k, rove.toml_literal(v)) for k, v in overrides])
    except KernelError as e:
        if e.exit_status == EXIT_USAGE:
            raise CliError(str(e)) from None
        _error(str(e))
        return EXIT_INTERNAL
    if not args.quiet:
        _print_run_summary(result.summary, out)
    return 0


def _fmt(value, spec: str, unit: str = "") -> str:
    if value is None:
        return "-"
    try:
        return f"{value:{spec}}{unit}"
    except (TypeError, ValueError):
        return str(value)


def _print_run_summary(summary: dict, out: Path) -> None:
    flows = summary.get("flows", [])
    events = summary.get("events")
    how = "on the Linux kernel" if summary.get("backend") == "kernel" else "simulated"
    what = "packets" if summary.get("backend") == "kernel" else "events"
    print(f"{summary.get('scenario', '?')}: {_fmt(summary.get('duration_s'), 'g')} s {how} "
          f"in {_fmt(summary.get('wall_s'), '.3f')} s wall, "
          f"{_fmt(events, ',')} {what}, seed {summary.get('seed')} -> {out}")
    width = max([len(str(f.get("name", ""))) for f in flows] + [4])
    cc_width = max([len(str(f.get("cc", ""))) for f in flows] + [6])
    for f in flows:
        if f.get("sent_pkts") is not None:  # an unresponsive source: no RTT, no retransmissions
            print(f"  {str(f.get('name')):<{width}}  {str(f.get('cc')):<{cc_width}}"
                  f"  goodput {_fmt(f.get('goodput_mbps'), '8.3f')} Mbps"
                  f"  OWD mean {_fmt(f.get('owd_mean_ms'), '7.1f')} ms"
                  f"  p95 {_fmt(f.get('owd_p95_ms'), '7.1f')} ms"
                  f"  loss {_fmt(_pct(f.get('loss_rate')), '6.2f')} %")
            continue
        line = (f"  {str(f.get('name')):<{width}}  {str(f.get('cc')):<{cc_width}}"
                f"  goodput {_fmt(f.get('goodput_mbps'), '8.3f')} Mbps"
                f"  RTT mean {_fmt(f.get('mean_rtt_ms'), '7.1f')} ms"
                f"  p95 {_fmt(f.get('p95_rtt_ms'), '7.1f')} ms"
                f"  retrans {_fmt(_pct(f.get('retrans_rate')), '6.2f')} %")
        if f.get("workload") == "video":
            line += (f"  video: {_fmt(f.get('frames_delivered'), ',')}/{_fmt(f.get('frames_sent'), ',')} frames,"
                     f" delay p50 {_fmt(f.get('frame_delay_p50_ms'), '.1f')} ms"
                     f" p95 {_fmt(f.get('frame_delay_p95_ms'), '.1f')} ms,"
                     f" deadline misses {_fmt(_pct(f.get('deadline_miss_ratio')), '.1f')} %")
            if f.get("required_delay_ms") is not None:
                line += (f", packets within {_fmt(f.get('required_delay_ms'), 'g')} ms"
                         f" {_fmt(_pct(f.get('packets_within_required_delay')), '.1f')} %")
        elif f.get("workload") == "requests":
            line += (f"  requests: {_fmt(f.get('transfers_completed'), ',')}/{_fmt(f.get('transfers_started'), ',')} done,"
                     f" fct mean {_fmt(f.get('fct_mean_s'), '.3f')} s p95 {_fmt(f.get('fct_p95_s'), '.3f')} s")
        if f.get("fct_s") is not None:
            line += f"  fct {_fmt(f.get('fct_s'), '.3f')} s"
        elif f.get("completed") is False:
            line += f"  unfinished ({_fmt(f.get('bytes_left'), ',')} B left)"
        if f.get("subflows") is not None:
            line += (f"  {f.get('scheduler')}, reordering buffer mean {_fmt(f.get('ofo_mean_bytes'), '.0f')} B"
                     f" max {_fmt(f.get('ofo_max_bytes'), ',')} B, app delay p95"
                     f" {_fmt(f.get('app_delay_p95_ms'), '.1f')} ms")
            if f.get("download_time_s") is not None:
                line += f", download {_fmt(f.get('download_time_s'), '.3f')} s"
            if f.get("path_cost") is not None:
                line += f", path cost {_fmt(f.get('path_cost'), '.2f')}"
        print(line)
        for sf in f.get("subflows") or []:
            print(f"  {'':<{width}}    subflow {sf.get('index')} ({','.join(sf.get('path', []))}):"
                  f" throughput {_fmt(sf.get('throughput_mbps'), '8.3f')} Mbps"
                  f"  RTT mean {_fmt(sf.get('mean_rtt_ms'), '7.1f')} ms"
                  f"  share {_fmt(_pct(sf.get('share')), '5.1f')} %"
                  + (f"  cost {_fmt(sf.get('cost'), 'g')}, peak x/c {_fmt(sf.get('peak_x_over_c'), '.2f')}"
                     if sf.get("cost") is not None else ""))
    if summary.get("jain_index") is not None and len(flows) > 1:
        print(f"  Jain's fairness index {_fmt(summary.get('jain_index'), '.4f')}")
    for w in summary.get("warnings") or []:
        print(f"rove: warning: {w}", file=sys.stderr)


def _pct(x):
    return None if x is None else 100.0 * x


def _cmd_validate(args) -> int:
    _check_readable(args.scenario, "scenario")
    import rove

    from .guards import describe

    info = rove.validate(args.scenario, seed=args.seed, overrides=_overrides(args.set),
                         no_limit=args.no_limit)
    n_links = len(info.get("links", []))
    n_flows = len(info.get("flows", []))
    print(f"ok: {info.get('name')}, {_fmt(info.get('duration_s'), 'g')} s, "
          f"{n_links} link{'s' if n_links != 1 else ''}, {n_flows} flow{'s' if n_flows != 1 else ''}"
          f"; estimate {describe(info['estimate'])}")
    return 0


def _cmd_report(args) -> int:
    from .outputs import OutputError, check_output_dir
    from .report import make_report
    from .sweep_report import is_sweep_dir, make_runs_report, make_sweep_report
    from .units import UnitError, parse_time_ns

    window = None
    if args.t_from is not None or args.t_to is not None:
        try:
            t0 = parse_time_ns(args.t_from) / 1e9 if args.t_from is not None else 0.0
            t1 = parse_time_ns(args.t_to) / 1e9 if args.t_to is not None else float("inf")
        except UnitError as e:
            raise CliError(f"--from/--to: {e}") from None
        window = (t0, t1)
    flows = [f.strip() for f in args.flows.split(",") if f.strip()] if args.flows else None
    dirs = [Path(d) for d in args.dir]
    if args.out is not None:
        try:
            check_output_dir(args.out, "page" if args.markdown else "report", force=args.force)
        except OutputError as e:
            raise CliError(str(e)) from None
    if args.markdown and (len(dirs) > 1 or not is_sweep_dir(dirs[0])):
        raise CliError(f"--markdown: {dirs[0] if len(dirs) == 1 else 'several directories'}: "
                       f"the Markdown page is for one sweep directory ('rove sweep')")
    if len(dirs) > 1:
        if args.out is None:
            raise CliError("several directories: name where the comparison goes with -o OUT")
        html = make_runs_report(dirs, args.out)
    elif is_sweep_dir(dirs[0]):
        html = make_sweep_report(dirs[0], args.out, markdown=args.markdown)
    else:
        html = make_report(dirs[0], out=args.out, window=window, flows=flows)
    print(f"report: {html}")
    return 0


def _cmd_sweep(args) -> int:
    from .sweeps import run_sweep

    _check_readable(args.sweep, "sweep")
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs: expected an integer >= 1, got {args.jobs}")
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    table, failures = run_sweep(args.sweep, args.out, jobs=args.jobs, ray=args.ray, log=log,
                                no_limit=args.no_limit)
    if not args.quiet:
        points = len(set(table.column("point").to_pylist())) if table.num_rows else 0
        print(f"sweep: {points} point{'s' if points != 1 else ''} complete, "
              f"{len(failures)} failed -> {Path(args.out) / 'summary.parquet'}")
        if failures:
            print(f"failed points: {Path(args.out) / 'failures.json'}")
        skipped = Path(args.out) / "skipped.json"
        if skipped.is_file():
            print(f"skipped cases (a required file is absent): {skipped}")
    return 1 if failures else 0


def _cmd_trace_synth(args) -> int:
    import rove
    from .units import UnitError, parse_time_ns

    try:
        duration_ns = parse_time_ns(args.duration)
    except UnitError as e:
        raise CliError(f"--duration: {e}") from None
    duration_ms = round(duration_ns / 1_000_000)
    if duration_ms < 1:
        raise CliError(f"--duration: {args.duration!r} is shorter than 1 ms; a trace needs at "
                       f"least one millisecond")
    if args.kind not in rove.SYNTH_KINDS:
        raise CliError(f"trace synth: unknown kind {args.kind!r} "
                       f"(accepted: {', '.join(rove.SYNTH_KINDS)})")
    params: dict[str, Any] = {}
    for item in args.param or []:
        k, v = _split_assignment("--param", item)
        params[k] = parse_value(v)
    stamps = rove.synth_trace(args.kind, params, duration_ms, args.seed)
    if args.out == "":
        raise CliError("-o: empty path; name the trace file to write")
    out = Path(args.out)
    if out.is_dir():
        raise CliError(f"{out}: is a directory (-o names the trace file to write)")
    if out.exists() and not args.force:
        raise CliError(f"{out}: exists; add --force to replace it, or choose another file")
    _write_text_atomically(out, "".join(f"{int(t)}\n" for t in stamps))
    if not args.quiet:
        rate = len(stamps) * 1500 * 8 / (duration_ms / 1000) / 1e6 if duration_ms else 0.0
        print(f"wrote {out}: {args.kind}, {duration_ms / 1000:g} s, {len(stamps)} delivery "
              f"opportunities (mean {rate:.2f} Mbps)")
    return 0


def _cmd_trace_record(args) -> int:
    from .trace_record import record

    if args.out == "":
        raise CliError("-o: empty path; name the trace file to write")
    out = Path(args.out)
    if out.is_dir():
        raise CliError(f"{out}: is a directory (-o names the trace file to write)")
    if out.exists() and not args.force:
        raise CliError(f"{out}: exists; add --force to replace it, or choose another file")
    if not Path(args.source).exists():
        raise CliError(f"{args.source}: no such scenario file or results directory")
    rec = record(args.source, args.port, seed=args.seed, overrides=_overrides(args.set))
    _write_text_atomically(out, rec.text())
    if not args.quiet:
        print(f"wrote {out}: {rec.port}, {rec.duration_ms / 1000:g} s, {len(rec.stamps)} "
              f"delivery opportunities (mean {rec.mean_mbps:.2f} Mbps; sampled every "
              f"{rec.sample_interval_ms:g} ms)")
    return 0


def _write_text_atomically(path: Path, text: str) -> None:
    parent = path.absolute().parent
    if not parent.is_dir():
        raise CliError(f"{path}: directory {parent} does not exist")
    from .results import write_bytes_atomically

    write_bytes_atomically(path, text.encode("ascii"))


# --------------------------------------------------------------------------------------------
# rove compare (python/rove/compare.py)


def _cmd_compare(args) -> int:
    from .compare import run_cli

    return run_cli(args)


def _add_compare_parser(sub) -> None:
    c = sub.add_parser("compare", help="results directories side by side, with ratios",
                       description="Print per flow and per link the results of two or more "
                                   "directories side by side, named after them, with each one's "
                                   "ratio to the first's; with -o, also draw them over each "
                                   "other (PNGs) and write compare.md/.html/.json.")
    c.add_argument("dirs", metavar="DIR", nargs="+",
                   help="results directories (at least two; ratios are to the first)")
    c.add_argument("-o", "--out", metavar="OUT", help="directory for figures and documents")
    c.add_argument("--force", action="store_true",
                   help="replace an earlier comparison in OUT")
    c.set_defaults(func=_cmd_compare)


# --------------------------------------------------------------------------------------------
# Parser and entry point


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected an integer >= 0") from None
    if value < 0 or value >= 2**64:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected an integer in "
                                         f"[0, 2^64)")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="rove", description="rove: a transport laboratory for mobile networks.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    r = sub.add_parser("run", help="run a scenario on the simulator and write results",
                       description="Run SCENARIO and write summary.json, timeseries.parquet and "
                                   "queue.parquet into DIR (replaced atomically).")
    r.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    r.add_argument("-o", "--out", metavar="DIR", required=True,
                   help="results directory to write (new or empty; see --force)")
    r.add_argument("--force", action="store_true",
                   help="replace the results of an earlier run in DIR (a directory that does "
                        "not hold rove results is never replaced)")
    r.add_argument("--seed", type=_seed, metavar="N", help="override the scenario's seed")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set links.down.rate=10Mbps (repeatable)")
    r.add_argument("--each", action="append", metavar="KEY=A,B,...",
                   help="run once per value, e.g. --each 'flows.*.cc=cubic,bbr,bbr2plus', "
                        "each into DIR/runs/<value>/ (a sweep; repeatable: every combination); "
                        "'rove report DIR' compares them")
    r.add_argument("--no-limit", action="store_true",
                   help="run even if the estimated memory does not fit or sample_interval is "
                        "below 1 ms")
    r.add_argument("--pcap", action="append", metavar="LINK",
                   help="write the packets that cross LINK to DIR/LINK.pcap (headers only; "
                        "Wireshark, tshark, tcptrace read it; repeatable)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    r.add_argument("--backend", choices=("sim", "kernel"), default="sim",
                   help="sim: the simulator (default); kernel: real Linux TCP in network "
                        "namespaces over rove's link emulator (needs root and /dev/net/tun)")
    r.set_defaults(func=_cmd_run)

    v = sub.add_parser("validate", help="check a scenario without running it",
                       description="Parse and check SCENARIO; print a one-line digest.")
    v.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    v.add_argument("--seed", type=_seed, metavar="N", help="override the scenario's seed")
    v.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a scenario key (repeatable)")
    v.add_argument("--no-limit", action="store_true",
                   help="accept a run whose estimated memory does not fit, or sample_interval "
                        "below 1 ms")
    v.set_defaults(func=_cmd_validate)

    rep = sub.add_parser("report", help="draw PNG plots and an HTML page from results",
                         description="Write PNG figures and report.html into DIR (or OUT). DIR "
                                     "is a results directory ('rove run'), or a sweep directory "
                                     "('rove sweep', 'rove run --each'), whose report compares "
                                     "the schemes (Pantheon-style goodput against delay, and "
                                     "each metric against each grid parameter); several "
                                     "results directories are compared the same way, with "
                                     "their names as labels (needs -o).")
    rep.add_argument("dir", metavar="DIR", nargs="+",
                     help="results directory, sweep directory, or several results directories")
    rep.add_argument("-o", "--out", metavar="OUT",
                     help="write the figures and report.html here instead of into DIR")
    rep.add_argument("--force", action="store_true", help="replace an earlier report in OUT")
    rep.add_argument("--markdown", action="store_true",
                     help="for a sweep directory: write README.md, a page with one figure and "
                          "table per scenario (for a docs folder), instead of report.html")
    rep.add_argument("--from", dest="t_from", metavar="TIME",
                     help="draw the time series from TIME on (e.g. 10s)")
    rep.add_argument("--to", dest="t_to", metavar="TIME", help="draw the time series up to TIME")
    rep.add_argument("--flows", metavar="A,B", help="draw only these flows (by name)")
    rep.set_defaults(func=_cmd_report)

    t = sub.add_parser("trace", help="work with Mahimahi traces",
                       description="Work with Mahimahi traces.")
    tsub = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", parser_class=_Parser)
    tsub.required = True
    s = tsub.add_parser("synth", help="write a synthetic Mahimahi trace",
                        description="Write a synthetic Mahimahi trace (KIND: constant, steps, "
                                    "cellular; see docs/scenario-format.md for the parameters).")
    s.add_argument("kind", metavar="KIND", help="constant, steps or cellular")
    s.add_argument("-o", "--out", metavar="FILE", required=True, help="trace file to write")
    s.add_argument("--duration", default="60s", metavar="TIME",
                   help="length of the trace (default: 60s)")
    s.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed (default: 1)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of KIND, e.g. --param mean=8Mbps (repeatable)")
    s.add_argument("--force", action="store_true", help="replace FILE if it exists")
    s.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    s.set_defaults(func=_cmd_trace_synth)
    r = tsub.add_parser("record", help="write the capacity a radio port received as a trace",
                        description="Write the capacity a radio cell's port received over a run "
                                    "as a Mahimahi trace (one line per 1500-byte delivery "
                                    "opportunity), from a results directory's radio.parquet or "
                                    "by running a scenario (its cell sampled every 1 ms). See "
                                    "docs/radio.md.")
    r.add_argument("source", metavar="SOURCE", help="a results directory or a scenario file")
    r.add_argument("--port", required=True, metavar="LINK:PORT",
                   help="the port, as a path names it, e.g. air:s1, air:s1:up or an LTE cell's cell:u1")
    r.add_argument("-o", "--out", metavar="FILE", required=True, help="trace file to write")
    r.add_argument("--seed", type=_seed, metavar="N",
                   help="the scenario's seed (a scenario SOURCE only)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a scenario key (a scenario SOURCE only; repeatable)")
    r.add_argument("--force", action="store_true", help="replace FILE if it exists")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    r.set_defaults(func=_cmd_trace_record)

    sw = sub.add_parser("sweep", help="run a grid of scenario variants in parallel (resumable)",
                        description="Run every point (grid combination x seed) of SWEEP.toml, "
                                    "each into DIR/runs/<id>/, skipping points already complete, "
                                    "and write DIR/summary.parquet (and DIR/failures.json when a "
                                    "point failed; exit status 1). See docs/sweeps.md.")
    sw.add_argument("sweep", metavar="SWEEP", help="sweep file (TOML)")
    sw.add_argument("-o", "--out", metavar="DIR", required=True,
                    help="sweep directory to write (an existing one is resumed)")
    sw.add_argument("-j", "--jobs", type=_positive_int, metavar="N",
                    help="parallel worker processes (default: the CPUs this process may use)")
    sw.add_argument("--ray", metavar="ADDRESS",
                    help="run the points as Ray tasks on the cluster at ADDRESS, or 'local' to "
                         "start one on this machine (needs ray installed)")
    sw.add_argument("--no-limit", action="store_true",
                    help="accept a grid over 100000 points or points that do not fit in memory")
    sw.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    sw.set_defaults(func=_cmd_sweep)

    # --- rove reproduce NAME ... (python/rove/reproduce/): the study parses its own options ---
    rp = sub.add_parser("reproduce", help="rerun a paper's experiments and report against it",
                        description="Rerun a source document's experiments and write a report "
                                    "(NAME: bbrv2plus, fidelity; 'rove reproduce NAME --help').",
                        add_help=False, prefix_chars="+")   # every argument is the study's
    rp.add_argument("study_args", nargs=argparse.REMAINDER, metavar="NAME [options]")
    rp.set_defaults(func=_cmd_reproduce)
    # --- end of rove reproduce ---

    # --- rove train NAME ... (python/rove/train/): the trainer parses its own options ---
    tn = sub.add_parser("train", help="train a learned controller's models on rove's own runs",
                        description="Run the sweep a learned controller's models are trained on, "
                                    "train them and write them with the sweep (NAME: sscc; "
                                    "'rove train NAME --help').",
                        add_help=False, prefix_chars="+")
    tn.add_argument("train_args", nargs=argparse.REMAINDER, metavar="NAME [options]")
    tn.set_defaults(func=_cmd_train)
    # --- end of rove train ---

    _add_compare_parser(sub)
    return p


def _cmd_reproduce(args) -> int:  # rove reproduce: dispatch to rove.reproduce.main
    from .reproduce import main as reproduce_main

    return reproduce_main(args.study_args)


def _cmd_train(args) -> int:  # rove train: dispatch to rove.train.main
    from .train import main as train_main

    return train_main(args.train_args)


def _positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid count {text!r}: expected an integer >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected an integer >= 1")
    return value


def _version() -> str:
    try:
        from . import __version__

        return f"rove {__version__}"
    except Exception:  # the native module is missing; still answer --version
        return "rove"


def _error(message: str) -> None:
    message = " ".join(str(message).split())
    print(f"rove: error: {message}", file=sys.stderr)


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rove`` console script; returns the exit status."""
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread
        pass
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except KeyboardInterrupt:
        print("rove: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except _Terminated:
        print("rove: terminated", file=sys.stderr)
        return EXIT_SIGTERM
    except CliError as e:
        _error(str(e))
        return EXIT_USAGE
    except OSError as e:
        if e.filename is not None:
            where = os.fsdecode(e.filename)
            _error(f"{where}: {e.strerror or e}")
        else:
            _error(str(e))
        return EXIT_USAGE
    except ImportError as e:
        _error(f"cannot load rove's native module ({e}); build it with 'make setup'")
        return EXIT_INTERNAL
    except MemoryError:
        _error("out of memory (the run needed more than the machine could give; see "
               "'rove validate' for its estimate)")
        return EXIT_INTERNAL
    except Exception as e:  # noqa: BLE001 - the one place that turns errors into messages
        if _is_user_error(e):
            _error(str(e))
            return EXIT_USAGE
        if os.environ.get("ROVE_DEBUG"):
            raise
        _error(f"internal error: {type(e).__name__}: {e} (set ROVE_DEBUG=1 for a traceback)")
        return EXIT_INTERNAL
    except BaseException as e:  # a Rust panic (pyo3's PanicException derives from BaseException)
        if type(e).__name__ != "PanicException" or os.environ.get("ROVE_DEBUG"):
            raise
        _error(f"internal error: the engine panicked: {e} (please report it with the scenario; "
               f"set ROVE_DEBUG=1 for a traceback)")
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            try:
                signal.signal(signal.SIGTERM, previous)
            except (ValueError, OSError):
                pass


def _is_user_error(e: Exception) -> bool:
    """ScenarioError (from the engine), ResultsError and unit errors are the user's input."""
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"ScenarioError", "ResultsError", "UnitError", "SweepError",
                         "OutputError", "LimitError"})


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
