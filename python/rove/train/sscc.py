"""``rove train sscc``: MPTCP-SSCC's selection models, trained on rove's own runs (seed 000 §4.5,
thesis §5.4.4 "Model training"; issue 16 item 4).

The bootstrap of the thesis, as a sweep:

1. **Environments** (Table 5.4): per environment and per path of a two-path connection over
   independent paths, a rate of 5–100 Mbit/s, an RTT of 20–400 ms, a DropTail buffer of
   0.1–50 MB, random loss of 0–2 %, and a CUBIC background file transfer of 0.1–50 MB.
2. **Runs**: every candidate algorithm (Table 5.3: BBR, CUBIC, Vegas, C2TCP, Westwood,
   Illinois) on the connection's both subflows, uncoupled ("prediction is disabled; each MPTCP
   connection picks a random CC"), ``runs`` times per environment (seeds 1, 2, ...), each
   ``duration`` long: the sweep ``bootstrap.toml`` over ``scenarios/sscc/train-env.toml``, one
   case per environment. Every run records its Data Units with ``kind = "data_units"``.
3. **Training data** (§5.4.4's Training Data Collector): for consecutive Data Units DU_n, DU_n+1
   of a subflow, the pair (DU_n's fields, the algorithm that ran during DU_n+1, DU_n+1's reward):
   "in state DU_n, choosing CC for the next period yielded R_n+1".
4. **Models**: one XGBoost regressor per candidate on its pairs (Algorithm 4's M_CC), trained
   on the environments not held out; the held-out environments' pairs give each model's error
   and how often the models' choice is an environment's best algorithm.
5. **Output**: the model set (``manifest.json`` and one ``CC.json`` per candidate, read by the
   engine's ``kind = "sscc"`` controller) with the sweep that made it, into ``--model-dir``
   (default: the repository's ``scenarios/sscc/model/``, whose set is compiled into the engine
   as the default: rebuild with ``make setup`` to use a new one; or name the manifest in a
   controller's ``model`` key).

Choices where the thesis is silent [GAP], with their defaults (recorded in the manifest):

- **Sampling**: rate, RTT and loss uniform over their ranges; buffer and background size
  log-uniform (they span 2.7 orders of magnitude, and a uniform draw would put 80 % of the
  buffers above 10 MB); each path drawn independently; the background transfer starts at a
  uniform time in the first half of the run (the thesis does not say when it starts).
- **Scale**: ``--scale thesis`` is the thesis's 200 environments × 6 algorithms × 5 runs × 30 s;
  ``--scale default`` (60 environments × 6 × 2 runs × 30 s) is small enough for a few minutes
  on two cores (:data:`SCALES`).
- **Held out**: the last fifth of the environments (at least one when there are two or more).
- **XGBoost** hyper-parameters (not given; :data:`XGB_PARAMS`): 25 trees of depth 3, learning
  rate 0.2, squared error, one thread, seed 0, features named as the engine's Data Units'. The
  size keeps the committed set small (about 180 kB for six models); on the default scale's
  held-out environments 60 trees of depth 4 (714 kB) had RMSEs within 0.04 of these and chose
  the best algorithm in 10 of 12 environments against these models' 12 of 12.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

#: Table 5.3's candidates, in the order ties are broken.
CANDIDATES = ("bbr", "cubic", "vegas", "c2tcp", "westwood", "illinois")

#: The Data Unit fields the models read, in order (the engine's ``DU_FEATURES``,
#: crates/world/src/control/sscc/data_unit.rs; a model set naming others is refused there).
DU_FEATURES = ("tput_mbps", "loss_mbps", "delay_ms", "delay_min_ms", "tput_max_mbps")

#: ACKs per Data Unit (thesis §5.4.3).
DU_ACKS = 20

#: Table 5.4's ranges.
TABLE_5_4 = {
    "rate_mbps": (5.0, 100.0),
    "rtt_ms": (20.0, 400.0),
    "buffer_mb": (0.1, 50.0),
    "loss": (0.0, 0.02),
    "background_mb": (0.1, 50.0),
}

#: XGBoost's settings [GAP] (the thesis gives none).
XGB_PARAMS = {
    "n_estimators": 25,
    "max_depth": 3,
    "learning_rate": 0.2,
    "objective": "reg:squarederror",
    "tree_method": "hist",
    "n_jobs": 1,
    "random_state": 0,
}

FORMAT = "rove-sscc-models"
VERSION = 1
MANIFEST = "manifest.json"
SWEEP_FILE = "bootstrap.toml"
HELD_OUT_FRACTION = 0.2


@dataclass(frozen=True)
class Scale:
    environments: int
    runs: int          # per environment and algorithm
    duration_s: int


SCALES = {
    # The thesis's bootstrap: 200 environments x 6 algorithms x 5 runs x 30 s (6000 runs).
    "thesis": Scale(environments=200, runs=5, duration_s=30),
    # Small enough to train in a few minutes on two cores: 720 runs (a tenth of the thesis's
    # environments, two runs of each instead of five).
    "default": Scale(environments=60, runs=2, duration_s=30),
}


def repository_root() -> Path | None:
    """The rove source tree this package runs from (``python/rove/train/sscc.py``), if any."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "scenarios" / "sscc" / "train-env.toml").is_file() else None


def draw_environments(n: int, seed: int, duration_s: float) -> list[dict]:
    """``n`` environments of Table 5.4 from ``seed``: per path ``a`` and ``b``, the rate
    (Mbit/s), RTT (ms), buffer (bytes), loss (probability), background size (bytes) and start
    (s)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lo, hi = TABLE_5_4["buffer_mb"]
    blo, bhi = TABLE_5_4["background_mb"]
    envs = []
    for _ in range(n):
        env = {}
        for path in ("a", "b"):
            env[path] = {
                "rate_mbps": round(float(rng.uniform(*TABLE_5_4["rate_mbps"])), 2),
                "rtt_ms": round(float(rng.uniform(*TABLE_5_4["rtt_ms"])), 1),
                "buffer_bytes": int(round(1e6 * math.exp(rng.uniform(math.log(lo), math.log(hi))))),
                "loss": round(float(rng.uniform(*TABLE_5_4["loss"])), 5),
                "background_bytes": int(round(1e6 * math.exp(rng.uniform(math.log(blo),
                                                                          math.log(bhi))))),
                "background_start_s": round(float(rng.uniform(0.0, duration_s / 2)), 3),
            }
        envs.append(env)
    return envs


def environment_overrides(env: dict) -> dict[str, Any]:
    """The ``--set`` overrides that make ``train-env.toml`` into environment ``env``."""
    out: dict[str, Any] = {}
    for path, bg in (("a", 1), ("b", 2)):
        p = env[path]
        one_way = f"{p['rtt_ms'] / 2:g}ms"
        out[f"links.{path}_down.rate"] = f"{p['rate_mbps']:g}Mbps"
        out[f"links.{path}_down.delay"] = one_way
        out[f"links.{path}_up.delay"] = one_way
        out[f"links.{path}_down.buffer"] = f"{p['buffer_bytes']}B"
        out[f"links.{path}_down.loss"] = p["loss"]
        out[f"flows.{bg}.size"] = f"{p['background_bytes']}B"
        out[f"flows.{bg}.start"] = f"{p['background_start_s']:g}s"
    return out


def sweep_document(scenario: str, envs: list[dict], runs: int, duration_s: float,
                   candidates: Sequence[str] = CANDIDATES) -> str:
    """The bootstrap sweep (TOML): every candidate on every environment, ``runs`` seeds."""
    import tomli_w

    doc = {
        "title": "MPTCP-SSCC bootstrap training (seed 000 §4.5, Table 5.4)",
        "description": (f"{len(envs)} environments x {len(candidates)} algorithms x {runs} "
                        f"runs x {duration_s:g} s, written by `rove train sscc`."),
        "scenario": scenario,
        "repetitions": runs,
        "fixed": {"duration": f"{duration_s:g}s"},
        "grid": {"flows.0.cc": list(candidates)},
        "cases": {f"env{i:03d}": {"set": environment_overrides(e)} for i, e in enumerate(envs)},
    }
    head = ("# Written by `rove train sscc`: the sweep whose runs trained the model set beside it.\n"
            "# Rerun with: rove sweep THIS_FILE -o DIR\n")
    return head + tomli_w.dumps(doc)


SWEEP_TIME_FILE = "sweep-time.json"


def completed_points(sweep_dir: Path) -> int:
    """How many points of a sweep directory have finished (their ``summary.json`` written)."""
    return sum(1 for _ in Path(sweep_dir).glob("runs/*/summary.json"))


def record_sweep_time(out: Path, wall_s: float, points_run: int) -> dict:
    """Add this invocation (its sweep's wall time and how many points it ran) to
    ``out/sweep-time.json`` and return the sweep's time: ``sweep_wall_s``, the sum of the wall
    times of the invocations that ran points (a resumed invocation that found every point done
    adds nothing, so the time is the real time of the points run, carried from the invocations
    that ran them); None when no recorded invocation ran a point (a directory whose sweep
    finished before this record existed). Also ``invocations`` (each ``wall_s`` and
    ``points_run``) and ``this_invocation_s``."""
    path = Path(out) / SWEEP_TIME_FILE
    try:
        earlier = json.loads(path.read_text())["invocations"]
    except (OSError, ValueError, KeyError, TypeError):
        earlier = []
    invocations = [*earlier, {"wall_s": round(wall_s, 1), "points_run": int(points_run)}]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"invocations": invocations}, indent=1) + "\n")
    os.replace(tmp, path)
    ran = [i["wall_s"] for i in invocations if i.get("points_run", 0) > 0]
    return {"sweep_wall_s": round(sum(ran), 1) if ran else None, "invocations": invocations,
            "this_invocation_s": wall_s}


def _pairs_of_run(path: Path):
    """(X, y, cc) of one run's Data Units: DU_n's fields, DU_n+1's reward and algorithm, for
    consecutive uncoupled DUs of each subflow."""
    import numpy as np
    import pyarrow.parquet as pq

    t = pq.read_table(path).to_pandas()
    xs, ys, ccs = [], [], []
    for _, g in t.groupby("subflow", sort=True):
        g = g.sort_values("time_s", kind="stable")
        ok = (g["is_coupled"].to_numpy() == 0)
        keep = ok[:-1] & ok[1:]
        xs.append(g[list(DU_FEATURES)].to_numpy()[:-1][keep])
        ys.append(g["reward"].to_numpy()[1:][keep])
        ccs.append(g["cc"].to_numpy()[1:][keep])
    if not xs:
        return np.zeros((0, len(DU_FEATURES))), np.zeros(0), np.zeros(0, dtype=object), len(t)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ccs), len(t)


def collect(sweep_path: Path, out: Path):
    """The training pairs of a finished sweep: a DataFrame with the environment (case), the
    algorithm, the features and the reward; and the number of Data Units read."""
    import numpy as np
    import pandas as pd

    from ..sweeps import expand_points, load_sweep

    spec = load_sweep(sweep_path)
    frames, dus = [], 0
    for p in expand_points(spec):
        f = out / "runs" / p.id / "features.parquet"
        if not f.is_file():
            continue  # a failed point (listed in failures.json)
        X, y, cc, n = _pairs_of_run(f)
        dus += n
        df = pd.DataFrame(X, columns=list(DU_FEATURES))
        df.insert(0, "cc", cc)
        df.insert(0, "seed", p.seed)
        df.insert(0, "env", p.case)
        df["reward"] = y
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["env", "seed", "cc", *DU_FEATURES, "reward"]), dus
    data = pd.concat(frames, ignore_index=True)
    data = data[np.isfinite(data[list(DU_FEATURES) + ["reward"]]).all(axis=1)]
    return data.reset_index(drop=True), dus


def held_out_environments(names: Sequence[str]) -> list[str]:
    """The environments kept out of training: the last fifth, at least one of two or more."""
    n = len(names)
    k = 0 if n < 2 else max(1, round(HELD_OUT_FRACTION * n))
    return list(names[n - k:])


def fit_models(data, held_out: Sequence[str], candidates: Sequence[str] = CANDIDATES):
    """One regressor per candidate on the pairs of the environments not held out; returns the
    models and, per candidate, the held-out error."""
    import numpy as np
    import xgboost as xgb

    train = data[~data["env"].isin(held_out)]
    test = data[data["env"].isin(held_out)]
    models, errors = {}, {}
    for cc in candidates:
        tr = train[train["cc"] == cc]
        te = test[test["cc"] == cc]
        if len(tr) == 0:
            raise ValueError(f"no training pairs for {cc}: every run of it failed or recorded "
                             f"no Data Unit")
        model = xgb.XGBRegressor(**XGB_PARAMS)
        model.fit(tr[list(DU_FEATURES)], tr["reward"])
        models[cc] = model
        e = {"train_pairs": int(len(tr)), "held_out_pairs": int(len(te))}
        if len(te):
            pred = model.predict(te[list(DU_FEATURES)]).astype(float)
            y = te["reward"].to_numpy(dtype=float)
            resid = pred - y
            base = y - float(tr["reward"].mean())
            e.update({
                "rmse": float(np.sqrt(np.mean(resid ** 2))),
                "mae": float(np.mean(np.abs(resid))),
                "baseline_rmse": float(np.sqrt(np.mean(base ** 2))),
                "r2": float(1 - np.sum(resid ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-300)),
                "mean_reward": float(y.mean()),
            })
        errors[cc] = e
    return models, errors


def selection_on_held_out(models: dict, data, held_out: Sequence[str]) -> dict:
    """How the models choose on each held-out environment: the algorithm with the best mean
    predicted reward over the environment's Data Units (every model on every DU), against the
    one whose runs earned the best mean reward."""
    rows = []
    for env in held_out:
        d = data[data["env"] == env]
        if d.empty:
            continue
        actual = d.groupby("cc")["reward"].mean()
        X = d[list(DU_FEATURES)]
        predicted = {cc: float(m.predict(X).mean()) for cc, m in models.items()}
        chosen = max(predicted, key=lambda c: predicted[c])
        best = str(actual.idxmax())
        rows.append({"env": env, "best": best, "chosen": chosen,
                     "best_reward": float(actual.max()),
                     "chosen_reward": float(actual.get(chosen, float("nan")))})
    agree = sum(r["best"] == r["chosen"] for r in rows)
    regrets = [r["best_reward"] - r["chosen_reward"] for r in rows
               if math.isfinite(r["chosen_reward"])]
    return {"environments": len(rows), "chose_the_best": agree,
            "mean_regret": (sum(regrets) / len(regrets)) if regrets else None,
            "per_environment": rows}


def write_model_set(model_dir: Path, models: dict, manifest: dict, sweep_text: str) -> Path:
    """Writes the models, ``manifest.json`` and the sweep into ``model_dir`` (each file
    replaced atomically; the manifest last, so a reader never sees a manifest naming models
    of another set)."""
    model_dir.mkdir(parents=True, exist_ok=True)
    for cc, m in models.items():
        tmp = model_dir / f".{cc}.tmp.json"   # XGBoost picks its format by the extension
        m.save_model(str(tmp))
        os.replace(tmp, model_dir / f"{cc}.json")
    for name, text in ((SWEEP_FILE, sweep_text),
                       (MANIFEST, json.dumps(manifest, indent=1, sort_keys=False) + "\n")):
        tmp = model_dir / f".{name}.tmp"
        tmp.write_text(text)
        os.replace(tmp, model_dir / name)
    return model_dir / MANIFEST


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rove train sscc",
        description="Run MPTCP-SSCC's bootstrap (thesis Table 5.4's environments, every "
                    "candidate algorithm) as a sweep into DIR, train one XGBoost regressor per "
                    "candidate, report the held-out error, and write the model set with the "
                    "sweep into --model-dir. See docs/sscc.md.")
    p.add_argument("-o", "--out", metavar="DIR", required=True,
                   help="directory for the sweep's runs (an existing one is resumed)")
    p.add_argument("--scale", choices=sorted(SCALES), default="default",
                   help="thesis: 200 environments x 6 algorithms x 5 runs x 30 s; "
                        "default: 60 x 6 x 2 x 30 s")
    p.add_argument("--environments", type=int, metavar="N", help="override the scale's count")
    p.add_argument("--runs", type=int, metavar="N", help="runs per environment and algorithm")
    p.add_argument("--duration", type=float, metavar="S", help="seconds per run")
    p.add_argument("--seed", type=int, default=1, help="seed of the environments' draw (1)")
    p.add_argument("--model-dir", metavar="DIR",
                   help="where to write the model set (default: the repository's "
                        "scenarios/sscc/model/)")
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="parallel runs (default: CPUs)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the result")
    return p


def main(argv: Sequence[str]) -> int:
    from ..cli import CliError
    from ..sweeps import load_sweep, run_spec

    args = _parser().parse_args(list(argv))
    scale = SCALES[args.scale]
    n_env = args.environments if args.environments is not None else scale.environments
    runs = args.runs if args.runs is not None else scale.runs
    duration = args.duration if args.duration is not None else scale.duration_s
    if n_env < 1 or runs < 1 or not duration > 0:
        raise CliError("train sscc: --environments and --runs must be >= 1 and --duration > 0")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("train sscc: --jobs must be >= 1")
    root = repository_root()
    if root is None:
        raise CliError("train sscc: scenarios/sscc/train-env.toml not found: run from a rove "
                       "source tree")
    template = root / "scenarios" / "sscc" / "train-env.toml"
    model_dir = Path(args.model_dir) if args.model_dir else root / "scenarios" / "sscc" / "model"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda line: None) if args.quiet else (
        lambda line: print(line, file=sys.stderr, flush=True))

    envs = draw_environments(n_env, args.seed, duration)
    sweep_path = out / SWEEP_FILE
    sweep_path.write_text(sweep_document(os.path.relpath(template, out.resolve()), envs, runs,
                                         duration))
    t0 = time.perf_counter()
    done_before = completed_points(out / "sweep")
    _, failures = run_spec(load_sweep(sweep_path), out / "sweep", jobs=args.jobs, log=None)
    ran = completed_points(out / "sweep") - done_before + len(failures)
    timing = record_sweep_time(out, time.perf_counter() - t0, ran)
    sweep_s = timing["sweep_wall_s"]
    log(f"sweep: {n_env * len(CANDIDATES) * runs} runs ({ran} run now, the rest "
        f"resumed) in {timing['this_invocation_s']:.1f} s; the sweep's time over the "
        f"invocations that ran points: "
        + ("unknown (finished before its time was recorded)" if sweep_s is None
           else f"{sweep_s:.1f} s") + f" ({len(failures)} failed)")

    t1 = time.perf_counter()
    data, dus = collect(sweep_path, out / "sweep")
    names = [f"env{i:03d}" for i in range(n_env)]
    held = held_out_environments(names)
    models, errors = fit_models(data, held)
    selection = selection_on_held_out(models, data, held)
    train_s = time.perf_counter() - t1

    import xgboost

    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "features": list(DU_FEATURES),
        "du_acks": DU_ACKS,
        "candidates": list(CANDIDATES),
        "models": {cc: f"{cc}.json" for cc in CANDIDATES},
        "reward": {"zeta": 5.0, "beta": 1.25, "loss_unit": "bps",
                   "label": "reward of the next Data Unit (Eq. 5.8)"},
        "training": {
            "command": "rove train sscc " + " ".join(argv),
            "scale": args.scale,
            **asdict(Scale(n_env, runs, duration)),
            "seed": args.seed,
            "table_5_4": {k: list(v) for k, v in TABLE_5_4.items()},
            "sampling": "rate, RTT, loss uniform; buffer, background size log-uniform; "
                        "background start uniform in the first half of the run",
            "sweep": SWEEP_FILE,
            "runs_total": n_env * len(CANDIDATES) * runs,
            "runs_failed": len(failures),
            "data_units": dus,
            "pairs": int(len(data)),
            "held_out_environments": held,
            "sweep_wall_s": None if sweep_s is None else round(sweep_s, 1),
            "sweep_invocations": timing["invocations"],
            "train_wall_s": round(train_s, 1),
            "xgboost": xgboost.__version__,
            "xgboost_params": XGB_PARAMS,
            "held_out_error": errors,
            "selection_on_held_out": {k: v for k, v in selection.items()
                                      if k != "per_environment"},
        },
    }
    sweep_text = sweep_document(os.path.relpath(template, model_dir.resolve()), envs, runs,
                                duration)
    path = write_model_set(model_dir, models, manifest, sweep_text)
    (out / "selection.json").write_text(json.dumps(selection, indent=1) + "\n")
    _print_report(manifest, path)
    return 0


def _print_report(manifest: dict, path: Path) -> None:
    t = manifest["training"]
    print(f"trained on {t['runs_total']} runs ({t['environments']} environments x "
          f"{len(manifest['candidates'])} algorithms x {t['runs']} x {t['duration_s']:g} s): "
          f"{t['data_units']} Data Units, {t['pairs']} pairs; sweep "
          f"{'time unknown' if t['sweep_wall_s'] is None else str(t['sweep_wall_s']) + ' s'}, "
          f"training {t['train_wall_s']} s")
    print(f"held-out environments: {', '.join(t['held_out_environments']) or 'none'}")
    print(f"{'cc':<10}{'train':>8}{'held out':>10}{'RMSE':>9}{'baseline':>10}{'MAE':>8}{'R2':>7}")
    for cc, e in t["held_out_error"].items():
        if "rmse" in e:
            print(f"{cc:<10}{e['train_pairs']:>8}{e['held_out_pairs']:>10}{e['rmse']:>9.3f}"
                  f"{e['baseline_rmse']:>10.3f}{e['mae']:>8.3f}{e['r2']:>7.2f}")
        else:
            print(f"{cc:<10}{e['train_pairs']:>8}{0:>10}")
    s = t["selection_on_held_out"]
    if s["environments"]:
        print(f"choice on held-out environments: the best algorithm in {s['chose_the_best']} of "
              f"{s['environments']}, mean regret {s['mean_regret']:.3f}")
    print(f"model set: {path}")
