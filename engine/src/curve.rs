//! Thin, safe wrappers over the few blst routines that blstrs does not expose: batch
//! normalisation, batch addition and single-threaded Pippenger. blstrs' point and scalar types
//! are `#[repr(transparent)]` over blst's, so slices of them can be handed to blst directly.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, blst_scalar, blst_scalar_from_fr};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;

fn g1_aff(points: &[G1Affine]) -> *const blst_p1_affine {
    points.as_ptr() as *const blst_p1_affine
}

fn g2_aff(points: &[G2Affine]) -> *const blst_p2_affine {
    points.as_ptr() as *const blst_p2_affine
}

/// Projective → affine for many points with one shared inversion.
pub fn g1_batch_to_affine(points: &[G1Projective], out: &mut [G1Affine]) {
    assert_eq!(points.len(), out.len());
    if points.is_empty() {
        return;
    }
    let ptrs = [points.as_ptr() as *const blst_p1, std::ptr::null()];
    // SAFETY: both types are repr(transparent) over blst's; blst reads `points.len()` inputs
    // from the contiguous array (null second pointer) and writes as many outputs.
    unsafe {
        blst::blst_p1s_to_affine(
            out.as_mut_ptr() as *mut blst_p1_affine,
            ptrs.as_ptr(),
            points.len(),
        )
    }
}

/// Projective → affine for many G2 points with one shared inversion.
pub fn g2_batch_to_affine(points: &[G2Projective], out: &mut [G2Affine]) {
    assert_eq!(points.len(), out.len());
    if points.is_empty() {
        return;
    }
    let ptrs = [points.as_ptr() as *const blst_p2, std::ptr::null()];
    // SAFETY: as for G1.
    unsafe {
        blst::blst_p2s_to_affine(
            out.as_mut_ptr() as *mut blst_p2_affine,
            ptrs.as_ptr(),
            points.len(),
        )
    }
}

/// Sum of affine points (blst shares inversions across the batch).
pub fn g1_sum(points: &[G1Affine]) -> G1Projective {
    if points.is_empty() {
        return G1Projective::identity();
    }
    let ptrs = [g1_aff(points), std::ptr::null()];
    let mut out = G1Projective::identity();
    // SAFETY: contiguous input array of `points.len()` affine points, one output.
    unsafe {
        blst::blst_p1s_add(
            &mut out as *mut _ as *mut blst_p1,
            ptrs.as_ptr(),
            points.len(),
        )
    };
    out
}

/// Sum of affine G2 points.
pub fn g2_sum(points: &[G2Affine]) -> G2Projective {
    if points.is_empty() {
        return G2Projective::identity();
    }
    let ptrs = [g2_aff(points), std::ptr::null()];
    let mut out = G2Projective::identity();
    // SAFETY: as for G1.
    unsafe {
        blst::blst_p2s_add(
            &mut out as *mut _ as *mut blst_p2,
            ptrs.as_ptr(),
            points.len(),
        )
    };
    out
}

/// Canonical little-endian bytes of a scalar, as blst's Pippenger wants them.
pub fn scalar_to_bytes(s: &Scalar) -> blst_scalar {
    let mut out = blst_scalar::default();
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { blst_scalar_from_fr(&mut out, s as *const Scalar as *const blst::blst_fr) };
    out
}

/// Single-threaded Pippenger over `points[i] * scalars[i]`; callers split work across threads.
pub fn g1_pippenger(points: &[G1Affine], scalars: &[blst_scalar]) -> G1Projective {
    assert_eq!(points.len(), scalars.len());
    let n = points.len();
    if n == 0 {
        return G1Projective::identity();
    }
    let mut out = G1Projective::identity();
    let pts = [g1_aff(points), std::ptr::null()];
    let scs = [scalars.as_ptr() as *const u8, std::ptr::null()];
    // SAFETY: blst requires a scratch area of the size it reports, in limb_t units.
    unsafe {
        let bytes = blst::blst_p1s_mult_pippenger_scratch_sizeof(n);
        let mut scratch = vec![0u64; bytes.div_ceil(8)];
        blst::blst_p1s_mult_pippenger(
            &mut out as *mut _ as *mut blst_p1,
            pts.as_ptr(),
            n,
            scs.as_ptr(),
            255,
            scratch.as_mut_ptr() as *mut blst::limb_t,
        );
    }
    out
}

/// Single-threaded Pippenger in G2.
pub fn g2_pippenger(points: &[G2Affine], scalars: &[blst_scalar]) -> G2Projective {
    assert_eq!(points.len(), scalars.len());
    let n = points.len();
    if n == 0 {
        return G2Projective::identity();
    }
    let mut out = G2Projective::identity();
    let pts = [g2_aff(points), std::ptr::null()];
    let scs = [scalars.as_ptr() as *const u8, std::ptr::null()];
    // SAFETY: as for G1.
    unsafe {
        let bytes = blst::blst_p2s_mult_pippenger_scratch_sizeof(n);
        let mut scratch = vec![0u64; bytes.div_ceil(8)];
        blst::blst_p2s_mult_pippenger(
            &mut out as *mut _ as *mut blst_p2,
            pts.as_ptr(),
            n,
            scs.as_ptr(),
            255,
            scratch.as_mut_ptr() as *mut blst::limb_t,
        );
    }
    out
}
