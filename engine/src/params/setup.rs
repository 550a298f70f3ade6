//! Groth16 parameter generation: fresh random toxic waste (tau, alpha, beta, gamma, delta),
//! used once and dropped, and every query computed with fixed-base window tables in parallel.

use anyhow::{bail, Context, Result};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::fixed_base::{FixedBase, TableCurve};
use super::Shape;
use super::{Parameters, VerifyingKey};
use crate::domain::Domain;

/// Where a long setup reports: (stage, done, total).
pub type Progress<'a> = &'a (dyn Fn(&str, usize, usize) + Sync);

/// Where setup computes its fixed-base products (every query point is one): the CPU's threads
/// by default, a GPU when the engine has one (`ParamsStore::set_products`). Both give the same
/// points for the same table and scalars.
pub trait Products: Send + Sync {
    /// What computes them, for the log.
    fn name(&self) -> String;
    /// `table`'s base times every scalar, in affine form and in order; `tick` is called with the
    /// count of each batch finished.
    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G1Affine>>;
    /// `g1` in G2.
    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G2Affine>>;
}

/// The fixed-base products on the CPU's threads.
pub struct CpuProducts;

impl Products for CpuProducts {
    fn name(&self) -> String {
        "the CPU".into()
    }
    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G1Affine>> {
        Ok(table.mul_many(scalars, tick))
    }
    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Scalar],
        tick: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<G2Affine>> {
        Ok(table.mul_many(scalars, tick))
    }
}

/// A, B and C of every variable (the constant one and the inputs first, then aux) at a point,
/// from the rows' Lagrange values there.
pub type Evaluated = [Vec<Scalar>; 3];

/// Generates parameters for `circuit`, whose counts `shape` already holds.
pub fn generate<C: Circuit<Scalar>, R: RngCore + CryptoRng>(
    circuit: C,
    shape: &Shape,
    rng: &mut R,
    progress: Progress,
) -> Result<Parameters> {
    generate_with(shape, rng, progress, &CpuProducts, |lagrange| {
        evaluate_reporting(circuit, shape, lagrange, progress)
    })
}

/// Runs `circuit` through the evaluating constraint system, one row after another (any
/// circuit; `generate` uses it).
pub fn evaluate<C: Circuit<Scalar>>(
    circuit: C,
    shape: &Shape,
    lagrange: &[Scalar],
) -> Result<Evaluated> {
    evaluate_reporting(circuit, shape, lagrange, &|_: &str, _: usize, _: usize| {})
}

/// [`evaluate`], reporting `("evaluating the circuit at tau", rows done, of the shape's)` as it
/// goes: at production size it is minutes of one core.
pub fn evaluate_reporting<C: Circuit<Scalar>>(
    circuit: C,
    shape: &Shape,
    lagrange: &[Scalar],
    progress: Progress,
) -> Result<Evaluated> {
    let mut cs = EvalCs::new(shape, lagrange, progress);
    circuit
        .synthesize(&mut cs)
        .map_err(|e| anyhow::anyhow!("synthesis failed: {e}"))?;
    if cs.row != shape.num_constraints
        || cs.num_aux != shape.num_aux
        || cs.num_inputs != shape.num_inputs
    {
        bail!("the circuit's counts differ from its shape");
    }
    Ok([cs.at, cs.bt, cs.ct])
}

/// `generate` with its fixed-base products on `products`, for a circuit evaluated by
/// `evaluate` (given the rows' Lagrange values at tau): the synthetic workload evaluates
/// itself in parallel; any circuit can go through `evaluate` above.
pub fn generate_with<R: RngCore + CryptoRng>(
    shape: &Shape,
    rng: &mut R,
    progress: Progress,
    products: &dyn Products,
    evaluate: impl FnOnce(&[Scalar]) -> Result<Evaluated>,
) -> Result<Parameters> {
    let domain = Domain::new(shape.log2_domain());
    let m = domain.size();
    let tau = Scalar::random(&mut *rng);
    let alpha = Scalar::random(&mut *rng);
    let beta = Scalar::random(&mut *rng);
    let gamma = Scalar::random(&mut *rng);
    let delta = Scalar::random(&mut *rng);
    let (gamma_inv, delta_inv) = (gamma.invert().unwrap(), delta.invert().unwrap());

    // Each stage's seconds go to the log: where a large setup's time goes.
    let mut clock = std::time::Instant::now();
    let mut lap = |stage: &str| {
        tracing::info!(
            "setup, 2^{} rows: {stage} in {:.2} s",
            shape.log2_domain(),
            clock.elapsed().as_secs_f64()
        );
        clock = std::time::Instant::now();
    };
    // Each vector is dropped once used: at 32 GiB every one of them is 4 GB or more, and the
    // queries made (47 GB) come on top of what is still held.
    progress("evaluating the circuit at tau", 0, 1);
    let lagrange = domain
        .lagrange_at(tau)
        .context("tau fell in the evaluation domain; run the setup again")?;
    let [mut at, bt, ct] = evaluate(&lagrange)?;
    let total = shape.num_inputs + shape.num_aux;
    if [&at, &bt, &ct].iter().any(|v| v.len() != total) {
        bail!("the circuit's evaluation has the wrong number of variables");
    }
    // Each input's `x * 0 = 0` row.
    for i in 0..shape.num_inputs {
        at[i] += lagrange[shape.num_constraints + i];
    }
    drop(lagrange);
    lap("the circuit evaluated at tau");

    let ni = shape.num_inputs;
    // (beta·A + alpha·B + C) / gamma for inputs, / delta for aux.
    let ext: Vec<Scalar> = (0..total)
        .into_par_iter()
        .map(|i| {
            (beta * at[i] + alpha * bt[i] + ct[i]) * if i < ni { gamma_inv } else { delta_inv }
        })
        .collect();
    drop(ct);
    let z_over_delta = (tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let powers = powers(tau, m);
    let h_scalars: Vec<Scalar> = powers[..m - 1]
        .par_iter()
        .map(|p| *p * z_over_delta)
        .collect();
    drop(powers);
    let nonzero = |v: Vec<Scalar>| -> Vec<Scalar> {
        v.into_par_iter()
            .filter(|s| !bool::from(s.is_zero()))
            .collect()
    };
    let (a_s, b_s) = (nonzero(at), nonzero(bt));
    if ext[ni..].iter().any(|s| bool::from(s.is_zero())) {
        bail!("the circuit has an unconstrained variable: its L query point would be zero");
    }

    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let g1_total = h_scalars.len() + total + a_s.len() + b_s.len();
    let t1 = FixedBase::<G1Projective>::new(g1, g1_total);
    let t2 = FixedBase::<G2Projective>::new(g2, b_s.len());
    lap("query scalars and window tables");
    let done = AtomicUsize::new(0);
    let tick = |n: usize| {
        let d = done.fetch_add(n, Ordering::Relaxed) + n;
        progress("G1 queries", d, g1_total);
    };
    tracing::info!("setup: fixed-base products on {}", products.name());
    let g1_query = |scalars: &[Scalar]| {
        let made = products.g1(&t1, scalars, &tick);
        or_cpu(made, "G1", products, &t1, scalars, &tick)
    };
    let h = g1_query(&h_scalars);
    drop(h_scalars);
    let mut ic_l = g1_query(&ext);
    drop(ext);
    let a = g1_query(&a_s);
    drop(a_s);
    let b_g1 = g1_query(&b_s);
    lap("G1 queries");
    let done2 = AtomicUsize::new(0);
    let tick2 = |n: usize| {
        let d = done2.fetch_add(n, Ordering::Relaxed) + n;
        progress("G2 queries", d, b_s.len());
    };
    let made = products.g2(&t2, &b_s, &tick2);
    let b_g2 = or_cpu(made, "G2", products, &t2, &b_s, &tick2);
    lap("G2 queries");
    drop(b_s);
    // L in place, without a second copy of it.
    let ic: Vec<G1Affine> = ic_l.drain(..ni).collect();
    let l = ic_l;

    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic,
    };
    Ok(Parameters {
        vk,
        h,
        l,
        a,
        b_g1,
        b_g2,
    })
}

/// `made`, the products `on` computed for `scalars`, spot-checked against the CPU's at 33
/// indices spread over them (a broken kernel shows there); the CPU's products instead when
/// `on` failed (a GPU out of memory) or a spot differs: setup goes on either way.
fn or_cpu<G: TableCurve>(
    made: Result<Vec<G::Affine>>,
    group: &str,
    on: &dyn Products,
    table: &FixedBase<G>,
    scalars: &[Scalar],
    tick: &(dyn Fn(usize) + Sync),
) -> Vec<G::Affine> {
    const SPOTS: usize = 32;
    let checked = made.and_then(|points| {
        let n = points.len();
        if n != scalars.len() {
            bail!("{n} points for {} scalars", scalars.len());
        }
        let spots: Vec<usize> = (0..SPOTS.min(n))
            .map(|k| k * n / SPOTS.min(n))
            .chain(n.checked_sub(1))
            .collect();
        let want: Vec<G> = spots.iter().map(|i| table.mul(&scalars[*i])).collect();
        let mut want_affine = vec![G::Affine::default(); want.len()];
        G::batch_to_affine(&want, &mut want_affine);
        match spots
            .iter()
            .zip(&want_affine)
            .find(|(i, w)| points[**i] != **w)
        {
            Some((i, _)) => bail!("product {i} differs from the CPU's"),
            None => Ok(points),
        }
    });
    checked.unwrap_or_else(|e| {
        tracing::warn!(
            "setup: {group} products on {} failed ({e:#}); making them on the CPU",
            on.name()
        );
        table.mul_many(scalars, tick)
    })
}

fn powers(x: Scalar, n: usize) -> Vec<Scalar> {
    const CHUNK: usize = 4096;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut p = x.pow_vartime([(c * CHUNK) as u64]);
            for v in chunk {
                *v = p;
                p *= x;
            }
        });
    out
}

/// Accumulates every variable's A, B and C polynomials evaluated at tau.
struct EvalCs<'a> {
    lagrange: &'a [Scalar],
    progress: Progress<'a>,
    /// Rows the shape has, for the progress.
    rows: usize,
    /// Inputs first, then aux: the order of the A and B queries.
    at: Vec<Scalar>,
    bt: Vec<Scalar>,
    ct: Vec<Scalar>,
    /// Inputs the shape declares; aux slots start after them.
    first_aux: usize,
    num_inputs: usize,
    num_aux: usize,
    row: usize,
}

impl<'a> EvalCs<'a> {
    fn new(shape: &Shape, lagrange: &'a [Scalar], progress: Progress<'a>) -> Self {
        let n = shape.num_inputs + shape.num_aux;
        EvalCs {
            lagrange,
            progress,
            rows: shape.num_constraints,
            at: vec![Scalar::ZERO; n],
            bt: vec![Scalar::ZERO; n],
            ct: vec![Scalar::ZERO; n],
            first_aux: shape.num_inputs,
            num_inputs: 1,
            num_aux: 0,
            row: 0,
        }
    }
}

fn accumulate(
    cs_slot: impl Fn(Variable) -> usize,
    lc: &LinearCombination<Scalar>,
    l: Scalar,
    out: &mut [Scalar],
) {
    for (var, coeff) in lc.iter() {
        out[cs_slot(var)] += *coeff * l;
    }
}

impl ConstraintSystem<Scalar> for EvalCs<'_> {
    type Root = Self;

    crate::constraint_system::counting_alloc!();

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let l = self.lagrange[self.row];
        self.row += 1;
        if self.row % (1 << 16) == 0 {
            (self.progress)("evaluating the circuit at tau", self.row, self.rows);
        }
        let first_aux = self.first_aux;
        let slot = |v: Variable| match v.get_unchecked() {
            Index::Input(i) => i,
            Index::Aux(i) => first_aux + i,
        };
        accumulate(slot, &a(LinearCombination::zero()), l, &mut self.at);
        accumulate(slot, &b(LinearCombination::zero()), l, &mut self.bt);
        accumulate(slot, &c(LinearCombination::zero()), l, &mut self.ct);
    }

    crate::constraint_system::namespaces_ignored!();
}

/// `n` independent uniformly random G1 points (random multiples of the generator), for tests
/// and device checks; fixed-base tables make this cheap at millions of points.
pub fn random_g1(n: usize, seed: u64) -> Vec<blstrs::G1Affine> {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    FixedBase::<G1Projective>::new(G1Projective::generator(), n).mul_many(&scalars, &|_| {})
}
