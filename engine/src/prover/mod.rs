//! The Groth16 math, independent of where NTTs and MSMs run: which scalars meet which query,
//! the r/s randomisation and assembly of a proof, the proof format, and verification.

mod groth16;
mod proof;
mod verify;

pub use groth16::{assemble, prepare};
pub use proof::Proof;
pub use verify::{verify, PreparedVerifyingKey, VerifyError};

use anyhow::Result;
use blstrs::Scalar;

use crate::backend::{Executor, Gate, RegionInput, RegionOptions, Steps};
use crate::circuit::precompiled::{Precompiled, Witness};
use crate::circuit::Assignment;
use crate::params::Parameters;

/// No lock: for proving outside the pipeline.
struct Open;

impl Gate for Open {
    fn memory(&mut self, _: &mut Steps) {}
    fn compute(&mut self, _: &mut Steps) {}
}

/// Proves one assignment on `exec` with the given randomisers, outside the pipeline; B in G2
/// runs on the executor when it can. With the same r and s every backend must give the same bytes.
pub fn prove_with(
    exec: &dyn Executor,
    asg: Assignment,
    params: &Parameters,
    r: Scalar,
    s: Scalar,
) -> Result<Proof> {
    prove_staged(exec, asg, params, (r, s), true)
}

/// `prove_with`, choosing whether the executor prestages the witness first (as the pipeline's
/// synthesis workers do with `prestage` on) or stages it during the region.
pub fn prove_staged(
    exec: &dyn Executor,
    asg: Assignment,
    params: &Parameters,
    rs: (Scalar, Scalar),
    prestage: bool,
) -> Result<Proof> {
    prove_region_of(exec, asg, None, params, rs, prestage)
}

/// `prove_staged` of a pre-compiled circuit's witness with a, b and c left to the executor, as
/// the pipeline leaves them when every device evaluates them itself (the cuda backend, on the
/// device from its resident matrices; any other executor on the host).
pub fn prove_deferred(
    exec: &dyn Executor,
    circuit: &Precompiled,
    witness: Witness,
    params: &Parameters,
    rs: (Scalar, Scalar),
    prestage: bool,
) -> Result<Proof> {
    let asg = circuit.deferred(witness)?;
    prove_region_of(exec, asg, Some(circuit), params, rs, prestage)
}

fn prove_region_of(
    exec: &dyn Executor,
    mut asg: Assignment,
    circuit: Option<&Precompiled>,
    params: &Parameters,
    (r, s): (Scalar, Scalar),
    prestage: bool,
) -> Result<Proof> {
    let msms = prepare(&asg, params)?;
    let staged = match prestage {
        true => crate::backend::prestage(exec, &mut asg, &msms, circuit.is_some()),
        false => None,
    };
    let input = RegionInput::new(
        &mut asg,
        &msms,
        params,
        true,
        RegionOptions::default(),
        staged.as_ref(),
    )
    .with_circuit(circuit);
    let m = exec.prove_region(input, &mut Open, &mut Steps::default())?;
    // An executor without G2 kernels leaves B in G2 to the CPU.
    let b_g2 = match m.b_g2 {
        Some(b) => b,
        None => crate::backend::cpu::msm::msm::<blstrs::G2Projective>(&params.b_g2, &msms.b).0,
    };
    Ok(assemble(&params.vk, r, s, &m, b_g2))
}
