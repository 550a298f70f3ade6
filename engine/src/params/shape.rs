//! The shape of a circuit: its counts and a digest of every constraint's terms. Two circuits
//! with the same shape share Groth16 parameters.

use anyhow::Result;
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::PrimeField;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::mpsc::SyncSender;

/// A circuit's counts and the digest of its constraints: circuits of one shape share parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Public inputs including the constant one.
    pub num_inputs: usize,
    /// Aux (private) variables.
    pub num_aux: usize,
    /// Constraints of the circuit, without the `x * 0 = 0` row of each input.
    pub num_constraints: usize,
    /// Hex SHA-256 of the constraint structure.
    pub digest: String,
}

impl Shape {
    /// Rows of the evaluation domain before padding to a power of two.
    pub fn num_rows(&self) -> usize {
        self.num_constraints + self.num_inputs
    }

    /// log2 of the evaluation domain.
    pub fn log2_domain(&self) -> u32 {
        self.num_rows().next_power_of_two().trailing_zeros()
    }

    /// Synthesises `circuit` without a witness, hashing each constraint's terms on a thread of
    /// its own (at 32 GiB the hashing is 27 s of the pass's 88 on one core).
    pub fn of<C: Circuit<Scalar>>(circuit: C) -> Result<Shape> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
        std::thread::scope(|s| {
            let hasher = std::thread::Builder::new()
                .name("shape-hash".into())
                .spawn_scoped(s, move || {
                    let mut h = Sha256::new();
                    for bytes in rx {
                        h.update(&bytes);
                    }
                    h.finalize()
                })
                .map_err(|e| anyhow::anyhow!("starting the shape's hashing thread: {e}"))?;
            let mut cs = ShapeCs::new(tx);
            let made = circuit.synthesize(&mut cs);
            let counts = (cs.num_inputs, cs.num_aux, cs.num_constraints);
            cs.flush();
            drop(cs);
            let digest = hasher
                .join()
                .map_err(|_| anyhow::anyhow!("hashing the circuit's shape panicked"))?;
            made.map_err(|e| anyhow::anyhow!("synthesis failed: {e}"))?;
            Ok(Shape {
                num_inputs: counts.0,
                num_aux: counts.1,
                num_constraints: counts.2,
                digest: hex(&digest),
            })
        })
    }
}

/// Lower-case hex of `bytes`, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes handed to the hashing thread at a time.
const BATCH: usize = 1 << 16;

struct ShapeCs {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    /// The terms' bytes not yet handed over, in the order they are hashed.
    buf: Vec<u8>,
    hasher: SyncSender<Vec<u8>>,
}

impl ShapeCs {
    fn new(hasher: SyncSender<Vec<u8>>) -> Self {
        ShapeCs {
            num_inputs: 1,
            num_aux: 0,
            num_constraints: 0,
            buf: Vec::with_capacity(BATCH + 64),
            hasher,
        }
    }

    fn hash_lc(&mut self, tag: u8, lc: &LinearCombination<Scalar>) {
        self.buf.push(tag);
        for (var, coeff) in lc.iter() {
            let (kind, i) = match var.get_unchecked() {
                Index::Input(i) => (0u8, i),
                Index::Aux(i) => (1u8, i),
            };
            self.buf.push(kind);
            self.buf.extend_from_slice(&(i as u64).to_le_bytes());
            self.buf.extend_from_slice(coeff.to_repr().as_ref());
        }
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }

    /// Hands the bytes so far to the hashing thread (which outlives every `ShapeCs`).
    fn flush(&mut self) {
        let bytes = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH + 64));
        let _ = self.hasher.send(bytes);
    }
}

impl ConstraintSystem<Scalar> for ShapeCs {
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
        self.num_constraints += 1;
        self.hash_lc(b'a', &a(LinearCombination::zero()));
        self.hash_lc(b'b', &b(LinearCombination::zero()));
        self.hash_lc(b'c', &c(LinearCombination::zero()));
    }

    crate::constraint_system::namespaces_ignored!();
}

#[cfg(test)]
mod tests {
    use crate::circuit::Workload;

    /// The digest keys every parameter file cached or recorded: how it is computed may change,
    /// the bytes it hashes may not.
    #[test]
    fn a_circuit_s_digest_stays_what_it_was() {
        let shape = Workload::Sha256 { blocks: 2 }.shape().unwrap();
        assert_eq!(
            (shape.num_inputs, shape.num_aux, shape.num_constraints),
            (3, 72018, 72092)
        );
        assert_eq!(
            shape.digest,
            "9abac2f8c4fb363f8a1be01db7e0eda18902516de7c8034a08bc3f1a6f273160"
        );
    }
}
