//! `provetop check`: every GPU result against the cpu backend on fresh random inputs: NTTs in
//! every order, the H polynomial, MSMs (odd sizes, zeros, ones, r − 1, points at infinity), the
//! batch addition of scalar-one bases, G2 MSMs (B in G2's Pippenger), setup's fixed-base
//! products and whole parameter sets (identical for the same toxic waste), and whole proofs
//! with B in G2 on the GPU, and with a pre-compiled circuit's a, b and c evaluated on the GPU,
//! which must verify and, with the same r and s, be byte-identical to the cpu backend's.

use anyhow::{bail, Result};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use provetop_engine::backend::cpu::{msm, ntt::Domain, CpuExecutor};
use provetop_engine::backend::cuda::{self, CudaExecutor, NttKind};
use provetop_engine::circuit::Workload;
use provetop_engine::params::setup::random_g1;
use provetop_engine::prover;
use provetop_engine::store::ParamsStore;
use rand::{Rng, SeedableRng};
use std::time::Instant;

use crate::run::UsageError;

struct Report {
    failed: usize,
    total: usize,
}

impl Report {
    fn check(&mut self, what: &str, r: Result<bool>, start: Instant) {
        self.total += 1;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        match r {
            Ok(true) => println!("PASS  {what}  ({ms:.0} ms)"),
            Ok(false) => {
                self.failed += 1;
                println!("FAIL  {what}: differs from the cpu backend");
            }
            Err(e) => {
                self.failed += 1;
                println!("FAIL  {what}: {e:#}");
            }
        }
    }
}

fn random_scalars(n: usize, rng: &mut impl Rng) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// In every run of `period` scalars: 0, 1, r − 1, then random ones.
fn edge_mix(n: usize, period: usize, rng: &mut impl Rng) -> Vec<Scalar> {
    (0..n)
        .map(|i| match i % period {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => -Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

pub fn main(max_log2: u32) -> Result<i32> {
    let seed: u64 = rand::random();
    println!("check: seed {seed}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // No usable GPU is not a GPU that miscomputed: nothing was checked, and a supervisor
    // must not read it as a failed check.
    let gpus = match cuda::executors(&[]) {
        Ok(g) if !g.is_empty() => g,
        Ok(_) => return Err(UsageError(anyhow::anyhow!("no GPU: nothing checked")).into()),
        Err(e) => {
            return Err(UsageError(anyhow::anyhow!("no GPU: nothing checked ({e:#})")).into())
        }
    };
    let mut rep = Report {
        failed: 0,
        total: 0,
    };
    for gpu in &gpus {
        check_gpu(gpu, &mut rng, max_log2, &mut rep)?;
    }
    println!(
        "check: {}/{} passed on {} GPU(s)",
        rep.total - rep.failed,
        rep.total,
        gpus.len()
    );
    Ok(if rep.failed == 0 { 0 } else { 1 })
}

fn check_gpu(
    gpu: &CudaExecutor,
    rng: &mut impl Rng,
    max_log2: u32,
    rep: &mut Report,
) -> Result<()> {
    use provetop_engine::backend::Executor;
    let name = gpu.device().to_string();
    let t = Instant::now();
    let r = gpu.upload_rates(4 << 30).map(|u| {
        println!("INFO  {name} host-to-device GB/s: pinned {:.1}, staged from pageable {:.1}, pageable {:.1}", u.pinned, u.staged, u.pageable);
        u.pinned > 0.0
    });
    rep.check(&format!("{name} uploads of 4 GiB"), r, t);
    for k in [1, 5, 10, 11, 12, 16, 20, 22]
        .into_iter()
        .filter(|k| *k <= max_log2)
    {
        let d = Domain::new(k);
        let x = random_scalars(1 << k, rng);
        for kind in [
            NttKind::Forward,
            NttKind::Inverse,
            NttKind::CosetForward,
            NttKind::CosetInverse,
        ] {
            let t = Instant::now();
            let r = (|| {
                let mut got = x.clone();
                gpu.ntt(&mut got, kind)?;
                let mut want = x.clone();
                let g = Scalar::MULTIPLICATIVE_GENERATOR;
                match kind {
                    NttKind::Forward => d.ntt(&mut want),
                    NttKind::Inverse => d.intt(&mut want),
                    NttKind::CosetForward => {
                        provetop_engine::backend::cpu::ntt::distribute_powers(
                            &mut want,
                            g,
                            Scalar::ONE,
                        );
                        d.ntt(&mut want)
                    }
                    NttKind::CosetInverse => {
                        d.intt(&mut want);
                        provetop_engine::backend::cpu::ntt::distribute_powers(
                            &mut want,
                            g.invert().unwrap(),
                            Scalar::ONE,
                        )
                    }
                }
                Ok(got == want)
            })();
            rep.check(&format!("{name} ntt {kind:?} 2^{k}"), r, t);
        }
        if k >= 2 {
            let t = Instant::now();
            let (a, b, c) = (
                random_scalars(1 << k, rng),
                random_scalars(1 << k, rng),
                random_scalars(1 << k, rng),
            );
            let r = (|| {
                let got = gpu.h_poly(&a, &b, &c)?;
                let (mut a, mut b, mut c) = (a.clone(), b.clone(), c.clone());
                Ok(got == d.h_poly(&mut a, &mut b, &mut c))
            })();
            rep.check(&format!("{name} H polynomial 2^{k}"), r, t);
        }
    }

    let sizes = [
        1usize,
        2,
        3,
        1000,
        4097,
        (1 << 16) + 3,
        (1 << 20) - 1,
        1 << 20,
    ];
    let max = sizes
        .iter()
        .copied()
        .filter(|n| *n <= 1 << max_log2)
        .max()
        .unwrap_or(1);
    let bases_all = random_g1(max, rng.gen());
    for n in sizes.into_iter().filter(|n| *n <= max) {
        let bases = &bases_all[..n];
        let cases: Vec<(&str, Vec<Scalar>, Vec<G1Affine>)> = vec![
            ("random", random_scalars(n, rng), bases.to_vec()),
            ("all zero", vec![Scalar::ZERO; n], bases.to_vec()),
            ("all one", vec![Scalar::ONE; n], bases.to_vec()),
            ("all r-1", vec![-Scalar::ONE; n], bases.to_vec()),
            (
                "bits, r-1 and infinity",
                edge_mix(n, 5, rng),
                bases
                    .iter()
                    .enumerate()
                    .map(|(i, b)| if i % 7 == 3 { G1Affine::identity() } else { *b })
                    .collect(),
            ),
        ];
        for (what, scalars, bases) in cases {
            let t = Instant::now();
            let r = gpu
                .msm(&bases, &scalars)
                .map(|got| got == msm::msm::<G1Projective>(&bases, &scalars).0);
            rep.check(&format!("{name} msm {what} n={n}"), r, t);
        }
        let t = Instant::now();
        let idx: Vec<u32> = (0..n as u32).filter(|i| i % 3 != 1).collect();
        let want: G1Projective = idx
            .iter()
            .map(|i| G1Projective::from(bases[*i as usize]))
            .sum();
        rep.check(
            &format!("{name} batch addition n={n}"),
            gpu.sum(bases, &idx).map(|got| got == want),
            t,
        );
    }

    check_g2_msm(gpu, rng, max_log2, rep);
    check_setup(gpu, rng, rep)?;

    let cache = std::env::temp_dir().join("provetop-check-params");
    let store = ParamsStore::new(Some(cache), None);
    let cpu = CpuExecutor::new(0, provetop_telemetry::config::cores())?;
    for w in [
        Workload::Synthetic {
            log2_constraints: 12.min(max_log2.max(4)),
        },
        Workload::Sha256 { blocks: 1 },
    ] {
        let t = Instant::now();
        let r = (|| {
            let loaded = store.get(&w, &|_, _, _| {})?;
            let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
            let seed = rng.gen();
            let asg = w.synthesize(seed, 0)?;
            let inputs = asg.public_inputs().to_vec();
            let b = prover::prepare(&asg, &loaded.params)?.b;
            let full = b
                .iter()
                .filter(|x| !bool::from(x.is_zero()) && **x != Scalar::ONE);
            println!(
                "INFO  {}: B has {} scalars, {} of them neither 0 nor 1 (the GPU's G2 Pippenger)",
                w.label(),
                b.len(),
                full.count()
            );
            // The witness prestaged in page-locked memory (the pipeline's default) and
            // staged during the region.
            let prestaged = prover::prove_staged(gpu, asg.clone(), &loaded.params, (r, s), true)?;
            let staged = prover::prove_staged(gpu, asg.clone(), &loaded.params, (r, s), false)?;
            let on_cpu = prover::prove_with(&cpu, asg, &loaded.params, r, s)?;
            if prover::verify(&loaded.pvk, &prestaged, &inputs).is_err() {
                bail!("the GPU proof does not verify");
            }
            Ok(prestaged.to_bytes() == on_cpu.to_bytes() && staged.to_bytes() == on_cpu.to_bytes())
        })();
        rep.check(
            &format!(
                "{name} proof of {} with B in G2 on the GPU verifies, same bytes as cpu (prestaged or not)",
                w.label()
            ),
            r,
            t,
        );
        check_abc(gpu, &cpu, &store, &w, rng, rep);
    }
    Ok(())
}

/// A pre-compiled circuit's a, b and c on the GPU (the resident matrices' products) against
/// the host's evaluation, and whole proofs with them evaluated there (the pipeline's path
/// with the cuda backend), prestaged or not, against the cpu backend's plain proof.
fn check_abc(
    gpu: &CudaExecutor,
    cpu: &CpuExecutor,
    store: &ParamsStore,
    w: &Workload,
    rng: &mut impl Rng,
    rep: &mut Report,
) {
    let name = gpu.gpu().name.clone();
    let seed: u64 = rng.gen();
    let t = Instant::now();
    let pc = store.circuit(w, &|_, _, _| {}).map(|(pc, _)| pc);
    let witness = w.witness(seed, 0);
    let r = (|| {
        let (pc, wit) = (pc.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?, witness?);
        let want = pc.abc(&wit.input, &wit.aux, None)?;
        Ok(gpu.abc_eval(pc, &wit.input, &wit.aux)? == want)
    })();
    let what = format!("{name} abc_eval of {} equals the host's", w.label());
    rep.check(&what, r, t);
    let t = Instant::now();
    let r = (|| {
        let pc = pc.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let loaded = store.get(w, &|_, _, _| {})?;
        let rs = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
        let asg = w.synthesize(seed, 0)?;
        let inputs = asg.public_inputs().to_vec();
        let on_cpu = prover::prove_with(cpu, asg, &loaded.params, rs.0, rs.1)?;
        let p = &loaded.params;
        let prestaged = prover::prove_deferred(gpu, pc, w.witness(seed, 0)?, p, rs, true)?;
        let staged = prover::prove_deferred(gpu, pc, w.witness(seed, 0)?, p, rs, false)?;
        if prover::verify(&loaded.pvk, &prestaged, &inputs).is_err() {
            bail!("the GPU proof does not verify");
        }
        Ok(prestaged.to_bytes() == on_cpu.to_bytes() && staged.to_bytes() == on_cpu.to_bytes())
    })();
    let what = format!(
        "{name} proof of {} with a, b, c on the GPU verifies, same bytes as cpu (prestaged or not)",
        w.label()
    );
    rep.check(&what, r, t);
}

/// B in G2's MSM on the GPU (G2 Pippenger, the host's Horner) against the cpu backend at
/// sizes from 1: full-width scalars, 0, 1 and r − 1 mixed with them, and mostly 0s and 1s as
/// B's tail is (its windows sized by the few others), over bases with a point at infinity.
fn check_g2_msm(gpu: &CudaExecutor, rng: &mut impl Rng, max_log2: u32, rep: &mut Report) {
    use group::Group;
    use provetop_engine::backend::Executor;
    use provetop_engine::params::fixed_base::FixedBase;
    let name = gpu.device().to_string();
    let sizes: Vec<usize> = [1usize, 2, 3, 100, 1000, 4097, (1 << 16) + 3]
        .into_iter()
        .filter(|n| *n <= 1 << max_log2)
        .collect();
    let max = sizes.iter().copied().max().unwrap_or(1);
    let g = G2Projective::generator() * Scalar::random(&mut *rng);
    let bases_all = FixedBase::new(g, max).mul_many(&random_scalars(max, rng), &|_| {});
    for n in sizes {
        let mut bases = bases_all[..n].to_vec();
        if n > 3 {
            bases[n / 2] = G2Affine::identity();
        }
        let cases: [(&str, Vec<Scalar>); 3] = [
            ("full-width", random_scalars(n, rng)),
            ("0, 1, r-1 and full-width mixed", edge_mix(n, 4, rng)),
            (
                "mostly 0 and 1 (as B's tail)",
                (0..n)
                    .map(|i| match (i % 61, i % 2) {
                        (7, _) => Scalar::random(&mut *rng),
                        (_, 0) => Scalar::ZERO,
                        _ => Scalar::ONE,
                    })
                    .collect(),
            ),
        ];
        for (what, scalars) in cases {
            let t = Instant::now();
            let r = gpu
                .g2_msm(&bases, &scalars)
                .map(|got| got == msm::msm::<G2Projective>(&bases, &scalars).0);
            rep.check(&format!("{name} G2 msm {what} n={n}"), r, t);
        }
    }
}

/// Setup on the GPU: fixed-base products in G1 and G2 with 8- and 16-bit tables, edge-case
/// scalars among random ones, then a whole parameter set from the same toxic waste both ways.
fn check_setup(gpu: &CudaExecutor, rng: &mut impl Rng, rep: &mut Report) -> Result<()> {
    use group::Group;
    use provetop_engine::backend::Executor;
    use provetop_engine::params::fixed_base::FixedBase;
    use provetop_engine::params::setup::{self, CpuProducts, Products};
    let name = gpu.device().to_string();
    let Some(products) = gpu.setup_products() else {
        bail!("{name} offers no setup products");
    };
    let mut scalars = random_scalars(5000, rng);
    scalars[..6].copy_from_slice(&[
        Scalar::ZERO,
        Scalar::ONE,
        -Scalar::ONE,
        Scalar::from(0x8000u64),
        Scalar::from(0xffffu64),
        Scalar::from(u64::MAX) * Scalar::from(u64::MAX),
    ]);
    // FixedBase takes 16-bit windows from 2^18 products on, 8-bit ones below.
    for products_hint in [1usize, 1 << 18] {
        let g1 = G1Projective::generator() * Scalar::random(&mut *rng);
        let t1 = FixedBase::new(g1, products_hint);
        let t = Instant::now();
        let r = products
            .g1(&t1, &scalars, &|_| {})
            .map(|got| got == t1.mul_many(&scalars, &|_| {}));
        rep.check(
            &format!("{name} setup G1 products, {}-bit table", t1.bits()),
            r,
            t,
        );
        let g2 = blstrs::G2Projective::generator() * Scalar::random(&mut *rng);
        let t2 = FixedBase::new(g2, products_hint);
        let t = Instant::now();
        let r = products
            .g2(&t2, &scalars, &|_| {})
            .map(|got| got == t2.mul_many(&scalars, &|_| {}));
        rep.check(
            &format!("{name} setup G2 products, {}-bit table", t2.bits()),
            r,
            t,
        );
    }
    let w = Workload::Synthetic {
        log2_constraints: 12,
    };
    let shape = w.shape()?;
    let seed: u64 = rng.gen();
    let make = |p: &dyn Products| {
        let mut toxic = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let circuit = provetop_engine::circuit::synthetic::SyntheticCircuit::new(12, 0);
        setup::generate_with(&shape, &mut toxic, &|_, _, _| {}, p, |l| {
            Ok(circuit.evaluate_at(l))
        })
    };
    let t = Instant::now();
    let r = (|| Ok(make(&*products)? == make(&CpuProducts)?))();
    rep.check(
        &format!("{name} setup of synthetic-k12 equals the CPU's (same toxic waste)"),
        r,
        t,
    );
    Ok(())
}
