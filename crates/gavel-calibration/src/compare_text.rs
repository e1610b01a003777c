//! A comparison of two calibration runs, for people.

use std::fmt::Write as _;

use gavel_stats::Interval;

use crate::policy::pct;
use crate::{Comparison, Side};

/// Width of the A column.
const WIDTH: usize = 28;

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.3}"))
}

fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), pct)
}

/// `value [low, high]`, each formatted by `f`.
fn with_ci(v: Option<f64>, i: Option<Interval>, f: fn(f64) -> String) -> String {
    match (v, i) {
        (Some(v), Some(i)) => format!("{} [{}, {}]", f(v), f(i.low), f(i.high)),
        (Some(v), None) => f(v),
        _ => "n/a".to_owned(),
    }
}

fn three(v: f64) -> String {
    format!("{v:.3}")
}

/// A signed difference in percentage points.
fn points(v: f64) -> String {
    format!("{:+.1}", v * 100.0)
}

/// Up to five ids, then how many more.
fn ids(list: &[String]) -> String {
    let mut out = list.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > 5 {
        let _ = write!(out, " and {} more", list.len() - 5);
    }
    out
}

impl Comparison {
    /// The two runs side by side, the paired tests and what they say.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{} ({}): two judges compared", self.dataset, self.kind);
        for (name, side) in [("A", &self.a), ("B", &self.b)] {
            let _ = writeln!(
                out,
                "  {name}  calibration run {} · judge {}",
                side.id, side.judge
            );
        }
        let _ = writeln!(out, "  {:<22} {:<WIDTH$} B", "", "A");
        let mut row = |label: &str, f: &dyn Fn(&Side) -> String| {
            let _ = writeln!(out, "  {label:<22} {:<WIDTH$} {}", f(&self.a), f(&self.b));
        };
        row("items", &|s| format!("{} ({} judged)", s.items, s.judged));
        row("coverage", &|s| pct(s.coverage));
        row("agreement", &|s| with_ci(s.agreement, s.agreement_ci, pct));
        row("agreement, all items", &|s| share(s.agreement_all_items));
        row("Cohen's kappa", &|s| with_ci(s.kappa, s.kappa_ci, three));
        let mut labels: Vec<&str> = Vec::new();
        for r in self.a.recall.iter().chain(&self.b.recall) {
            if !labels.contains(&r.label.as_str()) {
                labels.push(&r.label);
            }
        }
        for label in labels {
            row(&format!("recall of `{label}`"), &|s| {
                s.recall.iter().find(|r| r.label == label).map_or_else(
                    || "n/a".to_owned(),
                    |r| format!("{} ({} of {})", pct(r.recall), r.matched, r.items),
                )
            });
        }
        if self.kind == "pairwise" {
            row("position consistency", &|s| share(s.position_consistency));
        } else {
            row("Spearman", &|s| with_ci(s.spearman, s.spearman_ci, three));
            row("Kendall tau-b", &|s| {
                with_ci(s.kendall, s.kendall_ci, three)
            });
            row("Pearson", &|s| num(s.pearson));
        }
        row("fit to gate", &|s| {
            (if s.fit_to_gate { "yes" } else { "NO" }).to_owned()
        });
        let p = &self.paired;
        let _ = writeln!(
            out,
            "  paired on {} items (an abstention counts as wrong):",
            p.items
        );
        let _ = writeln!(
            out,
            "    agreement          A {} · B {} · B − A {} points{}",
            share(p.agreement_a),
            share(p.agreement_b),
            p.difference.map_or_else(|| "n/a".to_owned(), points),
            p.difference_ci.map_or_else(String::new, |i| format!(
                ", 95% CI [{}, {}]",
                points(i.low),
                points(i.high)
            ))
        );
        let _ = writeln!(
            out,
            "    discordant items   A right, B wrong: {} · A wrong, B right: {}",
            p.a_right_b_wrong, p.a_wrong_b_right
        );
        let verdict = match p.mcnemar_p {
            None => "    McNemar exact test n/a: no discordant item, no evidence of a difference"
                .to_owned(),
            Some(pv) if pv < 0.05 => format!(
                "    McNemar exact test p = {pv:.4}: {} agrees with people more often than {} (significant at 5%)",
                if p.a_wrong_b_right > p.a_right_b_wrong {
                    "B"
                } else {
                    "A"
                },
                if p.a_wrong_b_right > p.a_right_b_wrong {
                    "A"
                } else {
                    "B"
                },
            ),
            Some(pv) => {
                format!("    McNemar exact test p = {pv:.4}: no significant difference at 5%")
            }
        };
        let _ = writeln!(out, "{verdict}");
        for (what, list) in [
            ("only in A (unpaired)", &self.only_a),
            ("only in B (unpaired)", &self.only_b),
            ("relabelled in between (unpaired)", &self.relabelled),
        ] {
            if !list.is_empty() {
                let _ = writeln!(out, "  {what}: {} items: {}", list.len(), ids(list));
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        out
    }
}
