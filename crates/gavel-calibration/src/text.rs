//! The report for people.

use std::fmt::Write as _;

use gavel_stats::Interval;

use crate::Report;
use crate::policy::pct;

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.3}"))
}

fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), pct)
}

/// ` [low, high]` formatted by `f`, or nothing.
fn ci(i: Option<Interval>, f: fn(f64) -> String) -> String {
    i.map_or_else(String::new, |i| {
        format!("  95% CI [{}, {}]", f(i.low), f(i.high))
    })
}

fn three(v: f64) -> String {
    format!("{v:.3}")
}

impl Report {
    /// The report for people: the statistics, the confusion matrix and the gate.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} · judge {} · {} · {} items, {} judged, {} without a verdict",
            self.dataset, self.judge, self.kind, self.items, self.judged, self.errors
        );
        let _ = writeln!(
            out,
            "  coverage             {} ({} of {} judged; minimum {})",
            pct(self.coverage),
            self.judged,
            self.items,
            pct(self.policy.min_coverage)
        );
        let _ = writeln!(
            out,
            "  agreement            {}{}",
            share(self.agreement),
            ci(self.agreement_ci, pct)
        );
        let _ = writeln!(
            out,
            "  agreement, all items {} (abstentions count as disagreements)",
            share(self.agreement_all_items)
        );
        let _ = writeln!(
            out,
            "  Cohen's kappa        {} ({}){}",
            num(self.kappa),
            if self.kappa_weights == "quadratic" {
                "quadratic-weighted"
            } else {
                "unweighted"
            },
            ci(self.kappa_ci, three)
        );
        for r in &self.recall {
            let _ = writeln!(
                out,
                "  recall of {:<10} {} ({} of {}){}",
                format!("`{}`", r.label),
                pct(r.recall),
                r.matched,
                r.items,
                ci(r.ci, pct)
            );
        }
        if self.kind != "pairwise" {
            let _ = writeln!(
                out,
                "  Spearman             {}{}",
                num(self.spearman),
                ci(self.spearman_ci, three)
            );
            let _ = writeln!(
                out,
                "  Kendall tau-b        {}{}",
                num(self.kendall),
                ci(self.kendall_ci, three)
            );
            let _ = writeln!(out, "  Pearson              {}", num(self.pearson));
        } else {
            let _ = writeln!(
                out,
                "  position consistency {}",
                share(self.position_consistency)
            );
            let _ = writeln!(
                out,
                "  agreement, consistent pairs {} (over {} pairs judged the same in both orders)",
                share(self.consistent_agreement),
                self.consistent_pairs.unwrap_or(0)
            );
        }
        if let Some(cost) = self.cost_usd {
            let _ = writeln!(out, "  cost                 ${cost:.4}");
        }
        let _ = writeln!(out, "  confusion (rows human, columns judge):");
        let width = self
            .confusion
            .labels
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(1)
            .max(5);
        let _ = write!(out, "    {:>width$}", "");
        for l in &self.confusion.labels {
            let _ = write!(out, " {l:>width$}");
        }
        out.push('\n');
        for (l, row) in self.confusion.labels.iter().zip(&self.confusion.counts) {
            let _ = write!(out, "    {l:>width$}");
            for c in row {
                let _ = write!(out, " {c:>width$}");
            }
            out.push('\n');
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        if self.fit_to_gate {
            let recall: String = self
                .policy
                .min_recall
                .iter()
                .map(|(label, min)| format!(", recall of `{label}` ≥ {}", pct(*min)))
                .collect();
            let _ = writeln!(
                out,
                "  fit to gate (≥ {} items, coverage ≥ {}, agreement ≥ {}, kappa ≥ {}{recall}); a suite's gate holds these figures to its own `judge.calibration` bar",
                self.policy.min_items,
                pct(self.policy.min_coverage),
                pct(self.policy.min_agreement),
                self.policy.min_kappa
            );
        } else {
            let _ = writeln!(out, "  NOT FIT TO GATE: {}", self.not_fit.join("; "));
        }
        out
    }
}
