//! The region's plan, worked out before it touches the device: where a, b and c come from,
//! the witness MSMs' 0/1 split (done after synthesis when prestaged, else here) and the sizes
//! the workspace needs for them.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::time::Instant;

use super::super::abc::DeviceCircuit;
use super::super::msm;
use super::super::prestage::Witness;
use super::super::workspace::{h_scratch_bytes, Workspace, FR};
use crate::backend::{Engine, RegionInput, Steps};
use crate::telemetry::Stage;

/// An MSM whose scalars are split into the scalar-one bases and the rest.
pub(super) struct Split<'a> {
    /// The scalars; they go up with every 1 replaced by 0 (`zero_ones`), so the tail MSM
    /// skips them as it skips zeros.
    pub(super) tail: &'a [Scalar],
    pub(super) ones: Vec<u32>,
    /// Scalars other than 0 and 1: the tail MSM's terms.
    pub(super) terms: usize,
}

/// A witness MSM's scalars: how many, how many are one, how many other than 0 and 1.
#[derive(Clone, Copy)]
pub(super) struct Counts {
    pub(super) len: usize,
    pub(super) ones: usize,
    pub(super) terms: usize,
}

/// Finds the scalar-one positions: a read-only pass. The ones are zeroed while the scalars
/// are staged for upload, so no second copy of the scalars is ever written.
pub(super) fn split(scalars: &[Scalar]) -> Split<'_> {
    let ones: Vec<u32> = scalars
        .par_iter()
        .enumerate()
        .filter(|(_, s)| **s == Scalar::ONE)
        .map(|(i, _)| i as u32)
        .collect();
    let zeros = scalars
        .par_iter()
        .filter(|s| bool::from(s.is_zero()))
        .count();
    Split {
        tail: scalars,
        terms: scalars.len() - zeros - ones.len(),
        ones,
    }
}

/// Where a, b and c come from.
#[derive(Clone, Copy)]
pub(super) enum AbcFrom<'a> {
    /// The prestaged block's sections, as synthesis wrote them.
    Block(&'a Witness),
    /// `RegionInput::abc`'s vectors, staged as they go up.
    Vectors,
    /// The resident circuit's products over the witness, on the device; the witness goes up
    /// from the prestaged block's section, or from the assignment staged as it goes.
    Device(&'a DeviceCircuit, Option<&'a Witness>),
}

/// What the region works out before it touches the device.
pub(super) struct Plan<'a> {
    pub(super) log2: u32,
    pub(super) n: usize,
    pub(super) abc_from: AbcFrom<'a>,
    /// The witness as laid out after synthesis, its 0/1 split done there.
    pub(super) staged: Option<&'a Witness>,
    /// Else the 0/1 split done here.
    pub(super) splits: Option<[Split<'a>; 3]>,
    /// Per witness MSM (L, A, B): its scalars and how many of them are ones.
    pub(super) counts: [Counts; 3],
    /// The most scalars of an MSM: the workspace's room for each witness MSM.
    pub(super) msm_n: usize,
    /// One MSM scratch for all of them.
    pub(super) msm_bytes: usize,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        input: &'a RegionInput<'_>,
        circuit: Option<&'a DeviceCircuit>,
        steps: &mut Steps,
    ) -> Plan<'a> {
        let log2 = input.log2_domain;
        let n = 1usize << log2;
        // The witness MSMs' 0/1 split: done after synthesis when prestaged, else here.
        let staged = input
            .prestaged
            .and_then(|p| p.data.as_any().downcast_ref::<Witness>());
        let abc_from = match (circuit, staged) {
            (Some(c), _) => AbcFrom::Device(c, staged.filter(|w| w.layout.witness.len > 0)),
            (None, Some(w)) if input.abc[0].is_empty() => AbcFrom::Block(w),
            (None, _) => AbcFrom::Vectors,
        };
        let (splits, counts) = match staged {
            Some(w) => (
                None,
                [0, 1, 2].map(|i| Counts {
                    len: w.layout.tails[i].len,
                    ones: w.layout.ones[i].len,
                    terms: w.layout.terms[i],
                }),
            ),
            None => {
                let start = Instant::now();
                let s = [split(input.aux), split(&input.msms.a), split(&input.msms.b)];
                steps.push(Stage::Prep, Engine::Host, start, 0);
                let counts = s.each_ref().map(|sp| Counts {
                    len: sp.tail.len(),
                    ones: sp.ones.len(),
                    terms: sp.terms,
                });
                (Some(s), counts)
            }
        };
        let msm_n = counts.iter().fold(n - 1, |m, c| m.max(c.len));
        // One MSM scratch for H (over its bases or their shifted copies) and the tails that
        // run (B in G1's scalars are all bits: no tail), each sized by its terms, B's in G2 too
        // when it runs here.
        let b = counts[2];
        let g2 = match input.b_g2 && b.terms > 0 {
            true => msm::g2_scratch_bytes(b.len, b.terms),
            false => 0,
        };
        // a, b and c evaluated on the device take the same scratch first, for the witness and
        // the partial sums.
        let abc = circuit.map_or(0, |c| c.scratch_bytes());
        let msm_bytes = counts
            .iter()
            .filter(|c| c.terms > 0)
            .map(|c| msm::scratch_bytes(c.len, c.terms))
            .fold(h_scratch_bytes(n - 1).max(g2).max(abc), usize::max);
        Plan {
            log2,
            n,
            abc_from,
            staged,
            splits,
            counts,
            msm_n,
            msm_bytes,
        }
    }

    /// a, b, c and the NTT scratch in the workspace.
    pub(super) fn abc_dst(&self, ws: &Workspace) -> [u64; 4] {
        [0, 1, 2, 3].map(|i| ws.abc.at(i * self.n * FR))
    }

    /// Where witness MSM i's scalars and scalar-one positions go.
    pub(super) fn tail_dst(&self, ws: &Workspace, i: usize) -> (u64, u64) {
        (
            ws.scalars.at(i * self.msm_n * FR),
            ws.idx.at(i * self.msm_n * 4),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::prestage;
    use super::*;

    #[test]
    fn staged_scalars_have_their_ones_zeroed_and_positions_listed() {
        let s = [
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::from(2u64),
            -Scalar::ONE,
            Scalar::ONE,
        ];
        let sp = split(&s);
        assert_eq!(sp.ones, vec![1, 4]);
        let bytes = |v: &[Scalar]| crate::hostmem::as_bytes(v).to_vec();
        let mut staged = vec![0xAAu8; s.len() * FR];
        prestage::zero_ones(&mut staged, &bytes(sp.tail));
        let want = [
            Scalar::ZERO,
            Scalar::ZERO,
            Scalar::from(2u64),
            -Scalar::ONE,
            Scalar::ZERO,
        ];
        assert_eq!(staged, bytes(&want));
    }
}
