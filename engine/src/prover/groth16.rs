//! Which scalars meet which query, and the assembly of A, B, C with randomisers r and s.

use anyhow::{bail, Result};
use blstrs::{G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Curve};

use super::Proof;
use crate::backend::{Msms, RegionResult};
use crate::circuit::Assignment;
use crate::params::{Parameters, VerifyingKey};

/// Gathers the MSM scalars and checks the parameters fit the assignment.
pub fn prepare(asg: &Assignment, params: &Parameters) -> Result<Msms> {
    let a = asg.a_aux_density.select_after(&asg.input, &asg.aux);
    let b_inputs = asg.b_input_density.select_after(&[], &asg.input);
    let b = asg.b_aux_density.select_after(&b_inputs, &asg.aux);
    let domain = asg.num_rows().next_power_of_two();
    let checks = [
        ("public inputs (vk.ic)", params.vk.ic.len(), asg.input.len()),
        ("H query (domain − 1)", params.h.len(), domain - 1),
        ("L query (aux variables)", params.l.len(), asg.aux.len()),
        ("A query (variables A uses)", params.a.len(), a.len()),
        ("B_G1 query (variables B uses)", params.b_g1.len(), b.len()),
        ("B_G2 query (variables B uses)", params.b_g2.len(), b.len()),
    ];
    for (what, have, want) in checks {
        if have != want {
            bail!("params do not match the circuit: the {what} has {have} points, the circuit needs {want}");
        }
    }
    Ok(Msms { a, b })
}

/// The proof from a device's MSMs, B in G2 and the randomisers.
pub fn assemble(
    vk: &VerifyingKey,
    r: Scalar,
    s: Scalar,
    m: &RegionResult,
    b_g2: G2Projective,
) -> Proof {
    let g_a = vk.alpha_g1.to_curve() + m.a + vk.delta_g1 * r;
    let g_b = vk.beta_g2.to_curve() + b_g2 + vk.delta_g2 * s;
    let g_c =
        m.a * s + m.b_g1 * r + vk.delta_g1 * (r * s) + vk.alpha_g1 * s + vk.beta_g1 * r + m.h + m.l;
    Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    }
}
