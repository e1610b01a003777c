#!/usr/bin/env python3
"""Expected figures of `gavel calibrate compare`, computed independently with
statsmodels and SciPy.

Run once (needs `pip install scipy statsmodels scikit-learn`: it reuses the
`length` baseline restated in scripts/calibration_expected.py); the output is
committed: crates/gavel-calibration/tests/fixtures/compare_expected.json, which
the Rust test (crates/gavel-calibration/tests/compare.rs) must reproduce.

On every shared calibration file two judges are compared:
  A: gavel's `length` baseline (see calibration_expected.py), on every item;
  B: a rule the Rust test restates, on every item but the first (which is then
     unpaired), abstaining on each item whose 0-based line index i has
     i % 11 == 3:
       pairwise: the longer response in characters, the same in both orders;
       binary:   pass from 40 words up;
       likert:   1 + words // 40, at most 5.
An item is right when the verdict equals the human label (Likert: the human
mean rounded half up); an abstention is wrong.

Figures per file: paired items, items each got right, the discordant counts,
McNemar's exact p-value (statsmodels), and the agreement difference B - A with
its 95% paired percentile bootstrap interval (scipy.stats.bootstrap, 200,000
resamples; gavel draws 10,000, so the test allows Monte Carlo error).

usage: scripts/calibration_compare_expected.py CALIBRATION_DIR
"""

import json
import sys
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy.stats import bootstrap
from statsmodels.stats.contingency_tables import mcnemar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_expected import category, predict, prefer, words  # noqa: E402

RESAMPLES = 200_000


def rule_b(record, kind, index):
    if index % 11 == 3:
        return None
    if kind == "pairwise":
        return prefer(len(record["response_a"]), len(record["response_b"]))
    n = words(record["response"])
    if kind == "likert":
        return str(min(5, 1 + n // 40))
    return "pass" if n >= 40 else "fail"


def expected(path):
    records = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    first = records[0]
    kind = "pairwise" if first["task"] == "pairwise" else first["scale"]["type"]
    right_a, right_b = [], []
    for i, r in enumerate(records):
        if i == 0:
            continue
        human = category(r["human_score"]) if kind == "likert" else r["human_label"]
        right_a.append(predict(r, kind)[0] == human)
        right_b.append(rule_b(r, kind, i) == human)
    a, b = np.array(right_a), np.array(right_b)
    a_only, b_only = int(np.sum(a & ~b)), int(np.sum(~a & b))
    table = [[int(np.sum(a & b)), a_only], [b_only, int(np.sum(~a & ~b))]]
    ci = bootstrap((b.astype(float), a.astype(float)), lambda x, y, axis: np.mean(x - y, axis=axis),
                   paired=True, vectorized=True, n_resamples=RESAMPLES, method="percentile",
                   confidence_level=0.95, rng=np.random.default_rng(0)).confidence_interval
    return {
        "kind": kind,
        "paired": len(right_a),
        "only_a": [first["id"]],
        "right_a": int(a.sum()),
        "right_b": int(b.sum()),
        "a_right_b_wrong": a_only,
        "a_wrong_b_right": b_only,
        "mcnemar_p": float(mcnemar(table, exact=True).pvalue),
        "difference": float(b.mean() - a.mean()),
        "difference_ci": [float(ci.low), float(ci.high)],
    }


def main():
    folder = Path(sys.argv[1])
    root = Path(__file__).resolve().parent.parent
    output = root / "crates/gavel-calibration/tests/fixtures/compare_expected.json"
    result = {
        "_generated_by": "scripts/calibration_compare_expected.py",
        "_versions": {"numpy": np.__version__, "scipy": scipy.__version__,
                      "statsmodels": statsmodels.__version__},
        "bootstrap_resamples": RESAMPLES,
        "datasets": {p.stem: expected(p) for p in sorted(folder.glob("*.jsonl"))},
    }
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
