//! The numeric kernels of the encoder: matrix products through the `gemm` crate
//! (the same AVX2/FMA/AVX-512 kernels candle uses) and row-wise operations
//! written so the compiler vectorises them: no libm calls, every float
//! reduction split over independent lanes, and each loop compiled for the
//! widest vectors the CPU has (`pulp` picks them at run time).

use rayon::prelude::*;

/// Lanes of the hand-split reductions (two AVX registers, four SSE ones).
const LANES: usize = 8;

/// Rows per parallel task of the row-wise operations.
const ROWS_PER_TASK: usize = 16;

/// A row-major matrix view: `rows × cols` with rows `stride` apart.
#[derive(Clone, Copy)]
pub(crate) struct Mat<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) stride: usize,
}

impl<'a> Mat<'a> {
    /// A dense matrix over all of `data`.
    pub(crate) fn dense(data: &'a [f32], cols: usize) -> Self {
        Mat {
            data,
            rows: data.len() / cols.max(1),
            cols,
            stride: cols,
        }
    }

    /// Columns `start..start + cols` of this matrix.
    pub(crate) fn columns(self, start: usize, cols: usize) -> Self {
        assert!(start + cols <= self.cols, "column block out of range");
        Mat {
            data: &self.data[start.min(self.data.len())..],
            cols,
            ..self
        }
    }

    /// The view holds every element it addresses.
    fn check(&self) {
        if self.rows > 0 && self.cols > 0 {
            assert!(
                (self.rows - 1) * self.stride + self.cols <= self.data.len(),
                "matrix view exceeds its buffer"
            );
        }
    }
}

/// Whether `matmul` may split the product over rayon's threads.
#[derive(Clone, Copy)]
pub(crate) enum Threads {
    /// All of rayon's threads (large products).
    All,
    /// The calling thread only (small products already run in parallel).
    One,
}

/// The right-hand side of a product: `k × n` as stored, or stored `n × k` and
/// read transposed.
#[derive(Clone, Copy)]
pub(crate) enum Rhs<'a> {
    Plain(Mat<'a>),
    Transposed(Mat<'a>),
}

/// `out = scale · lhs · rhs`, where `lhs` is `m × k`, `rhs`
/// reads as `k × n`, and `out` is `m × n` with rows `out_stride` apart.
pub(crate) fn matmul(
    out: &mut [f32],
    out_stride: usize,
    lhs: Mat<'_>,
    rhs: Rhs<'_>,
    scale: f32,
    threads: Threads,
) {
    lhs.check();
    let (m, k) = (lhs.rows, lhs.cols);
    // The right-hand side's data, width n, and (k-stride, n-stride) for gemm.
    let (rhs, n, rhs_rs, rhs_cs) = match rhs {
        Rhs::Plain(rhs) => {
            assert_eq!(rhs.rows, k, "inner dimensions differ");
            (rhs, rhs.cols, rhs.stride, 1)
        }
        Rhs::Transposed(rhs) => {
            assert_eq!(rhs.cols, k, "inner dimensions differ");
            (rhs, rhs.rows, 1, rhs.stride)
        }
    };
    rhs.check();
    if m == 0 || n == 0 {
        return;
    }
    assert!(
        (m - 1) * out_stride + n <= out.len(),
        "output view exceeds its buffer"
    );
    let parallelism = match threads {
        Threads::All => gemm::Parallelism::Rayon(rayon::current_num_threads()),
        Threads::One => gemm::Parallelism::None,
    };
    // SAFETY: the asserts above keep every element gemm reads or writes inside
    // `lhs.data`, `rhs.data` and `out`; `out` is borrowed mutably, so it
    // overlaps neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            out_stride as isize,
            false,
            lhs.data.as_ptr(),
            1,
            lhs.stride as isize,
            rhs.data.as_ptr(),
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Adds `bias` to each `bias.len()`-wide row of `rows`, in parallel.
pub(crate) fn add_bias(rows: &mut [f32], bias: &[f32]) {
    plus_bias(rows, bias, Then::Keep);
}

/// The exact (erf) GELU, `x · Φ(x)`, of each `bias.len()`-wide row plus
/// `bias`, in place and in parallel.
pub(crate) fn bias_gelu(rows: &mut [f32], bias: &[f32]) {
    plus_bias(rows, bias, Then::Gelu);
}

fn plus_bias(rows: &mut [f32], bias: &[f32], then: Then) {
    let arch = pulp::Arch::new();
    rows.par_chunks_mut(bias.len() * ROWS_PER_TASK)
        .for_each(|rows| arch.dispatch(PlusBias { rows, bias, then }));
}

// Each row loop is a `pulp::WithSimd` whose `with_simd` is `inline(always)`:
// that is what makes it compile inside pulp's dispatch, with the CPU's widest
// vectors (a closure handed to `dispatch` is not reliably inlined, and stays at
// the baseline SSE2).

/// What becomes of a value once its bias is added.
#[derive(Clone, Copy)]
enum Then {
    Keep,
    Gelu,
}

struct PlusBias<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
    then: Then,
}

impl pulp::WithSimd for PlusBias<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let rows = self.rows.chunks_exact_mut(self.bias.len());
        match self.then {
            Then::Keep => rows.for_each(|row| {
                row.iter_mut().zip(self.bias).for_each(|(x, b)| *x += b);
            }),
            Then::Gelu => rows.for_each(|row| {
                for (x, b) in row.iter_mut().zip(self.bias) {
                    let v = *x + b;
                    *x = 0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2));
                }
            }),
        }
    }
}

/// What a layer normalisation adds to each row first: a bias and the matching
/// row of a residual.
#[derive(Clone, Copy)]
pub(crate) struct Addend<'a> {
    pub(crate) bias: &'a [f32],
    pub(crate) residual: &'a [f32],
}

/// Layer normalisation of each `gamma.len()`-wide row in place, after adding
/// `addend` when given, in parallel.
pub(crate) fn layer_norm(
    rows: &mut [f32],
    addend: Option<Addend<'_>>,
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
) {
    let width = gamma.len();
    let arch = pulp::Arch::new();
    let block = width * ROWS_PER_TASK;
    rows.par_chunks_mut(block)
        .enumerate()
        .for_each(|(index, rows)| {
            let addend = addend.map(|add| Addend {
                bias: add.bias,
                residual: &add.residual[index * block..index * block + rows.len()],
            });
            arch.dispatch(Normalize {
                rows,
                addend,
                gamma,
                beta,
                eps,
            })
        });
}

/// Layer normalisation of `rows`, after adding `addend` (its residual rows
/// matching `rows`).
struct Normalize<'a> {
    rows: &'a mut [f32],
    addend: Option<Addend<'a>>,
    gamma: &'a [f32],
    beta: &'a [f32],
    eps: f32,
}

impl pulp::WithSimd for Normalize<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let width = self.gamma.len();
        for (r, row) in self.rows.chunks_exact_mut(width).enumerate() {
            if let Some(add) = self.addend {
                let residual = &add.residual[r * width..(r + 1) * width];
                for ((x, b), res) in row.iter_mut().zip(add.bias).zip(residual) {
                    *x += b + res;
                }
            }
            normalize_row(row, self.gamma, self.beta, self.eps);
        }
    }
}

#[inline(always)]
fn normalize_row(row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let width = row.len() as f32;
    let mean = sum(row) / width;
    let mut lanes = [0f32; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            let d = x - mean;
            *lane += d * d;
        }
    }
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|x| (x - mean) * (x - mean))
        .sum();
    let variance = (lanes.iter().sum::<f32>() + tail) / width;
    let inv = 1.0 / (variance + eps).sqrt();
    for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
        *x = (*x - mean) * inv * g + b;
    }
}

/// Softmax of each `width`-wide row in place (one thread: the caller runs many
/// in parallel).
pub(crate) fn softmax_rows(rows: &mut [f32], width: usize) {
    pulp::Arch::new().dispatch(Softmax { rows, width })
}

struct Softmax<'a> {
    rows: &'a mut [f32],
    width: usize,
}

impl pulp::WithSimd for Softmax<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.width) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for x in row.iter_mut() {
                *x = exp(*x - max);
            }
            let inv = 1.0 / sum(row);
            row.iter_mut().for_each(|x| *x *= inv);
        }
    }
}

/// The sum of `values`, over independent lanes so that it vectorises.
#[inline(always)]
pub(crate) fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// `eˣ` for `x ≤ 0` (softmax and erf only need that half), relative error
/// about 2e-7: `x = n·ln2 + r`, a degree-6 polynomial for `eʳ` on
/// `|r| ≤ ln2/2` (Cephes' `expf`), and `2ⁿ` built in the exponent bits.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Rounds to nearest for |v| < 2²²: adding and removing 1.5·2²³.
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_2e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// `erf(x)` with absolute error below 1e-6 in f32 (Abramowitz & Stegun 7.1.26, the
/// form PyTorch's vectorised CPU GELU uses), branch-free so loops vectorise.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_7) * t - 0.284_496_72) * t
        + 0.254_829_6)
        * t;
    (1.0 - poly * exp(-a * a)).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std_over_the_range_softmax_and_erf_use() {
        let mut worst = 0f32;
        for i in 0..=100_000 {
            let x = -87.0 * i as f32 / 100_000.0;
            let (got, want) = (exp(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 5e-7, "relative error {worst:e}");
    }

    #[test]
    fn erf_matches_the_series_within_1e_6() {
        // erf by its Maclaurin series in f64, exact to 1e-12 on |x| ≤ 3.
        let reference = |x: f64| {
            let (mut term, mut total) = (x, x);
            for n in 1..200 {
                term *= -x * x / n as f64;
                total += term / (2 * n + 1) as f64;
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        };
        let mut worst = 0f64;
        for i in -3000..=3000 {
            let x = i as f32 / 1000.0;
            worst = worst.max((f64::from(erf(x)) - reference(f64::from(x))).abs());
        }
        assert!(worst < 1e-6, "absolute error {worst:e}");
        assert_eq!(erf(10.0), 1.0);
        assert_eq!(erf(-10.0), -1.0);
    }

    #[test]
    fn products_match_a_naive_loop_with_strides_and_scale() {
        let (m, k, n) = (5, 7, 3);
        let lhs: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        // rhs stored n × (k + 2): a strided column block, read transposed.
        let rhs: Vec<f32> = (0..n * (k + 2)).map(|i| (i as f32 * 0.11).cos()).collect();
        let rhs_view = Mat {
            data: &rhs,
            rows: n,
            cols: k + 2,
            stride: k + 2,
        }
        .columns(1, k);
        let mut out = vec![1.0f32; m * n];
        matmul(
            &mut out,
            n,
            Mat::dense(&lhs, k),
            Rhs::Transposed(rhs_view),
            0.5,
            Threads::All,
        );
        for i in 0..m {
            for j in 0..n {
                let dot: f32 = (0..k)
                    .map(|p| lhs[i * k + p] * rhs[j * (k + 2) + 1 + p])
                    .sum();
                assert!((out[i * n + j] - 0.5 * dot).abs() < 1e-5);
            }
        }
        let rhs_plain: Vec<f32> = (0..k * n).map(|i| i as f32 * 0.01).collect();
        let mut plain = vec![0f32; m * n];
        matmul(
            &mut plain,
            n,
            Mat::dense(&lhs, k),
            Rhs::Plain(Mat::dense(&rhs_plain, n)),
            1.0,
            Threads::One,
        );
        for i in 0..m {
            for j in 0..n {
                let dot: f32 = (0..k).map(|p| lhs[i * k + p] * rhs_plain[p * n + j]).sum();
                assert!((plain[i * n + j] - dot).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn softmax_and_layer_norm_rows() {
        let mut rows = vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0];
        softmax_rows(&mut rows, 3);
        let e: Vec<f32> = [1f32, 2.0, 3.0].iter().map(|x| (x - 3.0).exp()).collect();
        let s: f32 = e.iter().sum();
        for (got, want) in rows[..3].iter().zip(&e) {
            assert!((got - want / s).abs() < 1e-6);
        }
        assert!(rows[3..].iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-6));

        let mut row: Vec<f32> = (0..20).map(|i| i as f32).collect();
        layer_norm(&mut row, None, &[2.0; 20], &[1.0; 20], 1e-12);
        let mean = sum(&row) / 20.0;
        let var: f32 = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / 20.0;
        assert!((mean - 1.0).abs() < 1e-5 && (var - 4.0).abs() < 1e-4);

        // 40 rows of 3 with a bias and a residual: more than one parallel task.
        let width = 3;
        let residual: Vec<f32> = (0..40 * width).map(|i| (i % 7) as f32).collect();
        let bias = [0.5, -1.0, 2.0];
        let mut rows: Vec<f32> = (0..40 * width).map(|i| (i as f32 * 0.3).sin()).collect();
        let mut expected = rows.clone();
        for (i, x) in expected.iter_mut().enumerate() {
            *x += bias[i % width] + residual[i];
        }
        layer_norm(&mut expected, None, &[1.0; 3], &[0.0; 3], 1e-12);
        let addend = Addend {
            bias: &bias,
            residual: &residual,
        };
        layer_norm(&mut rows, Some(addend), &[1.0; 3], &[0.0; 3], 1e-12);
        assert_eq!(rows, expected);
    }
}
