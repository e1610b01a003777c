//! Statistics gavel reports and gates on, as pure functions over plain slices:
//! descriptive statistics of repeats, pass@k and pass^k, correlation (Pearson,
//! Spearman, Kendall τ-b), confidence intervals (Wilson, seeded bootstrap), agreement and Cohen's kappa (unweighted, linear or quadratic) from a
//! confusion matrix, Krippendorff's alpha among several raters, and paired tests for comparing two runs (Wilcoxon
//! signed-rank, exact sign test).
//!
//! Every function answers `None` where the statistic is undefined (too few values,
//! zero variance) rather than a made-up number.
//!
//! ```
//! use gavel_stats::{Confusion, Weights, spearman};
//!
//! let human = [0, 1, 2, 2, 1];
//! let judge = [0, 1, 2, 1, 1];
//! let m = Confusion::new(3, &human, &judge).unwrap();
//! assert_eq!(m.agreement(), Some(0.8));
//! assert!((m.kappa(Weights::Quadratic).unwrap() - 0.8).abs() < 1e-12); // as sklearn
//! let rho = spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]).unwrap();
//! assert!((rho - 1.0).abs() < 1e-12);
//! ```
#![deny(missing_docs)]

mod agreement;
mod correlation;
mod describe;
mod interval;
mod paired;
mod reliability;
mod repeats;

pub use agreement::{Confusion, Weights};
pub use correlation::{kendall, pearson, ranks, spearman};
pub use describe::{mean, percentile_sorted, stddev, variance};
pub use interval::{Bootstrap, Interval, wilson};
pub use paired::{PairedTest, sign_test, wilcoxon};
pub use reliability::krippendorff_alpha;
pub use repeats::{pass_at_k, pass_hat_k};
