//! The pre-compiled path against the plain one, and the cache's refusals.

use super::*;
use crate::circuit::{synthesize_generic, Shape, Workload};
use bellpepper_core::{ConstraintSystem, SynthesisError};

fn quiet(_: &str, _: usize, _: usize) {}

fn recorded(w: &Workload) -> Precompiled {
    w.record(&w.shape().unwrap(), &quiet).unwrap()
}

#[test]
fn precompiled_assignments_equal_the_plain_paths() {
    for w in [
        Workload::Synthetic {
            log2_constraints: 10,
        },
        Workload::Sha256 { blocks: 2 },
    ] {
        let pc = recorded(&w);
        for seed in [1, 2] {
            let plain = w.synthesize(seed, 0).unwrap();
            let got = pc.evaluate(w.witness(seed, 0).unwrap()).unwrap();
            assert_eq!(got, plain, "{} seed {seed}", w.label());
        }
        // Into lent memory, as the GPU path stages it.
        let n = pc.rows();
        let mut lent = [0, 1, 2].map(|_| vec![Scalar::from(7u64); n + 1]);
        let [a, b, c] = &mut lent;
        let got = pc.evaluate_into(w.witness(1, 0).unwrap(), Some([a, b, c]));
        let (got, plain) = (got.unwrap(), w.synthesize(1, 0).unwrap());
        assert_eq!((got.a.len(), got.aux), (0, plain.aux));
        for (l, v) in lent.iter().zip([&plain.a, &plain.b, &plain.c]) {
            assert_eq!((&l[..n], l[n]), (&v[..], Scalar::from(7u64)));
        }
    }
}

/// Inputs allocated between constraints (as `inputize` and `pack_into_inputs` do), terms
/// that cancel, repeated and negated coefficients, an input in B.
struct Interleaved;

impl Circuit<Scalar> for Interleaved {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let v = |x: u64| Ok(Scalar::from(x));
        let x = cs.alloc(|| "x", || v(3))?;
        let y = cs.alloc(|| "y", || v(5))?;
        cs.enforce(
            || "x·y",
            |l| l + x,
            |l| l + y,
            |l| l + (Scalar::from(15u64), CS::one()),
        );
        let p = cs.alloc_input(|| "p", || v(8))?;
        let five = Scalar::from(5u64);
        cs.enforce(
            || "(x + y − x + 5y)·1 = 6·p − 18",
            |l| l + x + y - x + (five, y),
            |l| l + CS::one(),
            |l| l + (Scalar::from(6u64), p) - (Scalar::from(18u64), CS::one()),
        );
        let z = cs.alloc(|| "z", || v(40))?;
        cs.enforce(|| "y·p = z", |l| l + y, |l| l + p, |l| l + z);
        let q = cs.alloc_input(|| "q", || v(2))?;
        cs.enforce(
            || "(z − 38)·1 = q",
            |l| l + z - (Scalar::from(38u64), CS::one()),
            |l| l + CS::one(),
            |l| l + q,
        );
        Ok(())
    }
}

#[test]
fn inputs_allocated_between_constraints_keep_their_columns() {
    let shape = Shape::of(Interleaved).unwrap();
    let pc = record(Interleaved, &shape, &quiet).unwrap();
    let plain = synthesize_generic(Interleaved).unwrap();
    assert_eq!(crate::circuit::is_satisfied(&plain), None);
    assert_eq!(
        pc.evaluate(witness_of(Interleaved, 0).unwrap()).unwrap(),
        plain
    );
    // 1, −1, then 15, 6 (y's merged terms), −18, −38; the cancelled x adds nothing.
    assert_eq!(pc.table().len(), 2 + 4);
    // x's terms cancel in the second row: A has y only, once.
    let a = pc.matrices()[0];
    let (from, to) = (a.row_ptr()[1] as usize, a.row_ptr()[2] as usize);
    assert_eq!(&a.cols()[from..to], &[pc.num_inputs() as u32 + 1]);
}

#[test]
fn a_witness_of_another_circuit_is_refused() {
    let w = Workload::Sha256 { blocks: 1 };
    let pc = recorded(&w);
    let mut wit = w.witness(0, 0).unwrap();
    wit.aux.pop();
    let e = pc.evaluate(wit).unwrap_err().to_string();
    assert!(e.contains("aux"), "{e}");
}

#[test]
fn the_cache_records_once_and_rebuilds_a_damaged_or_foreign_file() {
    use crate::params::cache::Origin;
    let dir = tempfile::tempdir().unwrap();
    let cache = CircuitCache::new(Some(dir.path().to_path_buf()));
    let w = Workload::Sha256 { blocks: 1 };
    let shape = w.shape().unwrap();
    let get = || cache.load_or_record(&w, &shape, &quiet).unwrap();
    let (first, origin) = get();
    let path = cache.path_for(&w, &shape);
    assert!(matches!(origin, Origin::Generated { path: Some(ref p), .. } if *p == path));
    let (again, origin) = get();
    assert!(matches!(origin, Origin::Cached { .. }));
    assert_eq!(again, first);
    let good = std::fs::read(&path).unwrap();
    // A flipped bit in the body, in the header, a truncated file, another circuit's file:
    // each is recorded again and the cache rewritten.
    let other = Workload::Synthetic {
        log2_constraints: 6,
    };
    let foreign = {
        let p = CircuitCache::new(Some(dir.path().join("other")));
        let (_, _) = p
            .load_or_record(&other, &other.shape().unwrap(), &quiet)
            .unwrap();
        std::fs::read(p.path_for(&other, &other.shape().unwrap())).unwrap()
    };
    let mut body = good.clone();
    *body.last_mut().unwrap() ^= 1;
    let mut header = good.clone();
    header[20] ^= 4;
    for bad in [body, header, good[..good.len() - 4].to_vec(), foreign] {
        std::fs::write(&path, &bad).unwrap();
        assert!(file::load(&path)
            .and_then(|pc| cache::fits(&pc, &shape))
            .is_err());
        let (pc, origin) = get();
        assert!(matches!(origin, Origin::Generated { .. }));
        assert_eq!(*pc, *first);
        assert_eq!(std::fs::read(&path).unwrap(), good);
    }
}

#[test]
fn a_file_with_a_valid_crc_but_columns_out_of_range_is_refused() {
    let w = Workload::Sha256 { blocks: 1 };
    let mut pc = recorded(&w);
    pc.c.cols[0] = (pc.num_inputs + pc.num_aux) as u32;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.r1cs");
    file::save(&pc, &path).unwrap();
    let e = format!("{:#}", file::load(&path).unwrap_err());
    assert!(e.contains("matrix C is malformed"), "{e}");
}
