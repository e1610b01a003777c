#!/usr/bin/env python3
"""Expected calibration statistics, computed independently with scikit-learn and SciPy.

Run once (needs `pip install scipy scikit-learn`); the outputs are committed:
crates/gavel-calibration/tests/fixtures/calibration_expected.json, which the Rust
tests (`gavel calibrate --baseline length` on every shared calibration file)
must reproduce, and crates/gavel-stats/tests/fixtures/paired_expected.json, the
Wilcoxon signed-rank and sign tests on fixed and data-derived differences.

The predictions are those of gavel's `length` baseline judge, restated here:
  pairwise: order 1 prefers the response with more characters (A if a > b, B if
            a < b, else tie), order 2 the one with more words (runs of
            non-ASCII-whitespace); equal orders give that verdict, else
            `inconsistent` (a category of its own, which agrees with no label).
  binary:   pass from 20 words up.
  likert:   1 + words // 25, at most 5.
Human Likert means are rounded half up to a category for kappa and agreement.

usage: scripts/calibration_expected.py CALIBRATION_DIR
"""

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import scipy
import sklearn
from scipy.stats import binomtest, pearsonr, spearmanr, wilcoxon
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, recall_score

WORD = re.compile(r"[^ \t\n\x0c\r]+")


def words(text):
    return len(WORD.findall(text))


def prefer(a, b):
    return "A" if a > b else "B" if a < b else "tie"


def predict(record, kind):
    if kind == "pairwise":
        a, b = record["response_a"], record["response_b"]
        first, second = prefer(len(a), len(b)), prefer(words(a), words(b))
        return (first if first == second else "inconsistent"), None, first == second
    n = words(record["response"])
    if kind == "likert":
        score = min(5, 1 + n // 25)
        return str(score), float(score), None
    return ("pass", 1.0, None) if n >= 20 else ("fail", 0.0, None)


def category(score):
    return str(int(min(5.0, max(1.0, math.floor(score + 0.5)))))


def nan_to_none(x):
    x = float(x)
    return None if math.isnan(x) else x


def expected(path):
    records = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    first = records[0]
    kind = "pairwise" if first["task"] == "pairwise" else first["scale"]["type"]
    labels = {"pairwise": ["A", "B", "tie", "inconsistent"], "binary": ["pass", "fail"],
              "likert": ["1", "2", "3", "4", "5"]}[kind]
    human, judge, human_scores, judge_scores, consistent = [], [], [], [], []
    for r in records:
        label, score, same = predict(r, kind)
        human.append(category(r["human_score"]) if kind == "likert" else r["human_label"])
        judge.append(label)
        if score is not None and r["human_score"] is not None:
            human_scores.append(float(r["human_score"]))
            judge_scores.append(score)
        if same is not None:
            consistent.append(same)
    weights = "quadratic" if kind == "likert" else None
    out = {
        "kind": kind,
        "items": len(records),
        "judged": len(records),
        "agreement": accuracy_score(human, judge),
        "kappa": nan_to_none(cohen_kappa_score(human, judge, labels=labels, weights=weights)),
        "confusion": confusion_matrix(human, judge, labels=labels).tolist(),
        "position_consistency": (sum(consistent) / len(consistent)) if consistent else None,
        # Per human label present: the share the judge labelled the same.
        "recall": {
            label: float(recall_score(human, judge, labels=[label], average=None,
                                      zero_division=0)[0])
            for label in labels if label in human
        },
        "spearman": None,
        "pearson": None,
    }
    if kind != "pairwise":
        out["spearman"] = nan_to_none(spearmanr(judge_scores, human_scores).statistic)
        out["pearson"] = nan_to_none(pearsonr(judge_scores, human_scores).statistic)
    return out


def paired(folder):
    """Wilcoxon (SciPy defaults) and exact sign tests on a few difference vectors."""
    summeval = [json.loads(line) for line in (folder / "summeval.jsonl").open(encoding="utf-8")]
    derived = [r["human_score"] - predict(r, "likert")[1] for r in summeval]
    vectors = {
        "exact_no_ties": [1.5, -0.25, 3.0, 2.25, -1.0, 4.5, 0.75, 2.0, -3.5, 5.25],
        "ties_small": [1.0, 1.0, -1.0, 2.0, 0.0, 2.0, 3.0, -2.0, 1.0],
        "ties_large": [round(x, 6) for x in [(i % 7) - 2.0 for i in range(40)]],
        "summeval_human_minus_length": derived,
    }
    out = {"wilcoxon": {}, "sign": []}
    for name, d in vectors.items():
        res = wilcoxon(d)
        out["wilcoxon"][name] = {"differences": d, "statistic": float(res.statistic),
                                 "p_value": float(res.pvalue)}
    for up, down in [(8, 2), (30, 45), (0, 7), (12, 12)]:
        out["sign"].append({"up": up, "down": down,
                            "p_value": float(binomtest(up, up + down).pvalue)})
    return out


def main():
    folder = Path(sys.argv[1])
    root = Path(__file__).resolve().parent.parent
    output = root / "crates/gavel-calibration/tests/fixtures/calibration_expected.json"
    paired_output = root / "crates/gavel-stats/tests/fixtures/paired_expected.json"
    paired_output.parent.mkdir(parents=True, exist_ok=True)
    paired_output.write_text(json.dumps(paired(folder), indent=2) + "\n", encoding="utf-8")
    result = {
        "_generated_by": "scripts/calibration_expected.py",
        "_versions": {"numpy": np.__version__, "scipy": scipy.__version__,
                      "scikit-learn": sklearn.__version__},
        "datasets": {p.stem: expected(p) for p in sorted(folder.glob("*.jsonl"))},
    }
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
