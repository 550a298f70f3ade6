//! Host staging right after synthesis: a partition's witness is laid out in page-locked memory
//! by the synthesis worker that made it, so a device's worker later only starts copies, at link
//! speed, with no host copy between them. Blocks come from the pool (`pinned`) and go back to
//! it when the partition's region is done.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::sync::Arc;

use super::pinned::Block;
use crate::backend::{Msms, Prestaged, StagePlan, Target};
use crate::circuit::Assignment;
use crate::hostmem::as_bytes;
use crate::telemetry::accounting::DeviceCounters;

const FR: usize = 32;
/// Elements per parallel piece of a fill.
const PIECE: usize = 1 << 16;

/// `len` elements at byte `at` of a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Section {
    pub at: usize,
    pub len: usize,
}

impl Section {
    pub fn bytes(&self, elem: usize) -> usize {
        self.len * elem
    }
}

/// Where a partition's witness sits in its block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Layout {
    /// A(z), B(z), C(z), verbatim; empty when the device evaluates them from `witness`.
    pub abc: [Section; 3],
    /// The assignment [inputs…, aux…] a pre-compiled circuit's a, b and c are evaluated from on
    /// the device; empty when they are staged.
    pub witness: Section,
    /// The L, A and B MSMs' scalars, every 1 written as 0 (the tail MSMs skip zeros).
    pub tails: [Section; 3],
    /// Each MSM's scalar-one positions (u32): room for the whole tail, `len` of them written.
    pub ones: [Section; 3],
    /// Each MSM's scalars other than 0 and 1: the terms its tail MSM adds up.
    pub terms: [usize; 3],
    pub bytes: usize,
}

impl Layout {
    /// Room for what `plan` stages (a, b and c, or the witness they come from, and the
    /// MSMs' scalars), every section starting on a 256-byte boundary.
    pub fn plan(plan: StagePlan) -> Layout {
        let mut at = 0;
        let mut next = |bytes: usize, len: usize| {
            let s = Section { at, len };
            at = (at + bytes).next_multiple_of(256);
            s
        };
        let rows = match plan.witness {
            Some(_) => 0,
            None => plan.rows,
        };
        let abc = [rows; 3].map(|n| next(n * FR, n));
        let witness = plan.witness.unwrap_or(0);
        let witness = next(witness * FR, witness);
        let tails = plan.tails.map(|n| next(n * FR, n));
        let ones = tails.map(|t| next(t.len * 4, t.len));
        Layout {
            abc,
            witness,
            tails,
            ones,
            // Until `fill_tails` counts them: every scalar a term.
            terms: tails.map(|t| t.len),
            bytes: at,
        }
    }
}

/// Copies scalars as bytes, writing 0 where the source holds 1 (whole scalars), around the
/// caches: the destination is for the copy engines.
pub(super) fn zero_ones(dst: &mut [u8], src: &[u8]) {
    // SAFETY: Scalar is 32 bytes of plain data (blst_fr), its Montgomery form as in memory.
    let one: [u8; FR] = unsafe { std::mem::transmute(Scalar::ONE) };
    crate::hostmem::stream_copy_zeroing(dst, src, &one);
}

/// Splits `dst` into the sections' byte ranges (in block order, as `plan` lays them out).
fn carve<const N: usize>(mut dst: &mut [u8], at: [(usize, usize); N]) -> [&mut [u8]; N] {
    let mut base = 0;
    at.map(|(start, bytes)| {
        let rest = std::mem::take(&mut dst);
        let (_, rest) = rest.split_at_mut(start - base);
        let (mine, rest) = rest.split_at_mut(bytes);
        base = start + bytes;
        dst = rest;
        mine
    })
}

/// Writes each MSM's scalars into `dst` as `layout` (from `Layout::plan`) places them, in
/// parallel on the current pool: ones zeroed and their positions listed. Returns the layout
/// with the ones' counts.
pub(super) fn fill_tails(dst: &mut [u8], mut layout: Layout, tails: [&[Scalar]; 3]) -> Layout {
    let sec = |s: &Section, elem: usize| (s.at, s.bytes(elem));
    let [l, ta, tb, ol, oa, ob] = carve(
        dst,
        [
            sec(&layout.tails[0], FR),
            sec(&layout.tails[1], FR),
            sec(&layout.tails[2], FR),
            sec(&layout.ones[0], 4),
            sec(&layout.ones[1], 4),
            sec(&layout.ones[2], 4),
        ],
    );
    for (i, ((d, idx), s)) in [l, ta, tb]
        .into_iter()
        .zip([ol, oa, ob])
        .zip(tails)
        .enumerate()
    {
        (layout.ones[i].len, layout.terms[i]) = split_into(d, idx, s);
    }
    layout
}

/// The a, b and c sections of a block laid out as `layout`, as scalars to write.
fn abc_sections<'a>(dst: &'a mut [u8], layout: &Layout) -> [&'a mut [Scalar]; 3] {
    let at = layout.abc.map(|s| (s.at, s.bytes(FR)));
    carve(dst, at).map(crate::hostmem::scalars_mut)
}

/// A block being filled: synthesis writes a/b/c into it, `finish` the MSMs' scalars.
pub(super) struct Filling {
    pub block: Block,
    pub layout: Layout,
    pub counters: Arc<DeviceCounters>,
}

impl Target for Filling {
    fn abc(&mut self) -> [&mut [Scalar]; 3] {
        abc_sections(self.block.bytes_mut(), &self.layout)
    }

    fn finish(self: Box<Self>, asg: &Assignment, msms: &Msms) -> Prestaged {
        let Filling {
            mut block,
            layout,
            counters,
        } = *self;
        let tails = [&asg.aux[..], &msms.a, &msms.b];
        let layout = fill_tails(block.bytes_mut(), layout, tails);
        fill_witness(block.bytes_mut(), layout.witness, [&asg.input, &asg.aux]);
        let copied: usize =
            layout.tails.iter().map(|s| s.bytes(FR)).sum::<usize>() + layout.witness.bytes(FR);
        counters.host_copied(copied as u64);
        Prestaged {
            rows: asg.num_rows(),
            data: Box::new(Witness { block, layout }),
        }
    }
}

/// The assignment's `parts` (inputs, then aux) one after the other into the witness section
/// (nothing when it is empty), in parallel pieces around the caches.
fn fill_witness(dst: &mut [u8], sec: Section, parts: [&[Scalar]; 2]) {
    if sec.len == 0 {
        return;
    }
    let dst = &mut dst[sec.at..sec.at + sec.bytes(FR)];
    let (head, rest) = dst.split_at_mut(parts[0].len() * FR);
    crate::hostmem::stream_copy(head, as_bytes(parts[0]));
    rest.par_chunks_mut(PIECE * FR)
        .zip(parts[1].par_chunks(PIECE))
        .for_each(|(d, s)| crate::hostmem::stream_copy(d, as_bytes(s)));
}

/// One MSM's scalars into `dst` with ones zeroed, their positions into `idx` (ascending);
/// returns how many ones and how many terms are left (scalars other than 0 and 1).
fn split_into(dst: &mut [u8], idx: &mut [u8], src: &[Scalar]) -> (usize, usize) {
    let found: Vec<(Vec<u32>, usize)> = dst
        .par_chunks_mut(PIECE * FR)
        .zip(src.par_chunks(PIECE))
        .enumerate()
        .map(|(p, (d, s))| {
            zero_ones(d, as_bytes(s));
            let zeros = s.iter().filter(|x| bool::from(x.is_zero())).count();
            let ones: Vec<u32> = s
                .iter()
                .enumerate()
                .filter(|(_, x)| **x == Scalar::ONE)
                .map(|(i, _)| (p * PIECE + i) as u32)
                .collect();
            let terms = s.len() - zeros - ones.len();
            (ones, terms)
        })
        .collect();
    let terms = found.iter().map(|f| f.1).sum();
    let mut at = 0;
    for (f, _) in &found {
        for (d, i) in idx[at * 4..(at + f.len()) * 4].chunks_exact_mut(4).zip(f) {
            d.copy_from_slice(&i.to_ne_bytes());
        }
        at += f.len();
    }
    (at, terms)
}

/// A partition's witness in a page-locked block.
pub(super) struct Witness {
    pub block: Block,
    pub layout: Layout,
}

impl crate::backend::Staged for Witness {
    fn abc(&self) -> [Vec<Scalar>; 3] {
        self.layout.abc.map(|s| {
            let bytes = &self.block.bytes()[s.at..s.at + s.bytes(FR)];
            bytes
                .chunks_exact(FR)
                .map(|c| {
                    // SAFETY: these bytes were copied from Scalars.
                    unsafe { std::ptr::read_unaligned(c.as_ptr() as *const Scalar) }
                })
                .collect()
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalars(v: &[u64]) -> Vec<Scalar> {
        v.iter().map(|x| Scalar::from(*x)).collect()
    }

    fn read(bytes: &[u8], s: Section) -> Vec<Scalar> {
        bytes[s.at..s.at + s.bytes(FR)]
            .chunks_exact(FR)
            // SAFETY: a whole 32-byte chunk, read unaligned; any bytes are a Scalar.
            .map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr() as *const Scalar) })
            .collect()
    }

    #[test]
    fn synthesis_into_a_block_writes_the_evaluations_where_the_layout_says() {
        let circuit = crate::circuit::synthetic::SyntheticCircuit::new(10, 7);
        let want = circuit.synthesize_parallel();
        let n = want.num_rows();
        let layout = Layout::plan(StagePlan {
            rows: n,
            tails: [want.aux.len(), 5, 5],
            witness: None,
        });
        // Aligned as a page-locked block is (sections start on 256-byte boundaries).
        let mut store = vec![Scalar::ZERO; layout.bytes.div_ceil(FR)];
        let block = &mut crate::hostmem::bytes_mut(&mut store)[..layout.bytes];
        let got = circuit.synthesize_parallel_into(Some(abc_sections(block, &layout)));
        assert!(got.a.is_empty() && got.b.is_empty() && got.c.is_empty());
        assert_eq!(got.num_rows(), n);
        for (s, want) in layout.abc.iter().zip([&want.a, &want.b, &want.c]) {
            assert_eq!(&read(block, *s), want);
        }
        assert_eq!((&got.aux, &got.input), (&want.aux, &want.input));
    }

    #[test]
    fn a_filled_block_holds_each_msm_split_into_ones_and_the_rest() {
        // More than one parallel piece, ones at both ends and across the piece boundary.
        let n = PIECE + 7;
        let l: Vec<Scalar> = (0..n)
            .map(|i| match i % 5 {
                0 | 3 => Scalar::ONE,
                1 => Scalar::ZERO,
                _ => Scalar::from(i as u64 + 2),
            })
            .collect();
        let a = scalars(&[1, 1, 1]);
        let b = scalars(&[9, 0]);
        let layout = Layout::plan(StagePlan {
            rows: 3,
            tails: [l.len(), a.len(), b.len()],
            witness: None,
        });
        assert!(layout
            .abc
            .iter()
            .chain(&layout.tails)
            .all(|s| s.at % 256 == 0));
        let mut block = vec![0xAAu8; layout.bytes];
        let got = fill_tails(&mut block, layout, [&l, &a, &b]);
        assert_eq!(got.abc, layout.abc);
        for (i, src) in [&l, &a, &b].into_iter().enumerate() {
            let tail = read(&block, got.tails[i]);
            let want: Vec<Scalar> = src
                .iter()
                .map(|s| if *s == Scalar::ONE { Scalar::ZERO } else { *s })
                .collect();
            assert_eq!(tail, want, "msm {i}");
            let ones: Vec<u32> = block[got.ones[i].at..got.ones[i].at + got.ones[i].len * 4]
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
                .collect();
            let want: Vec<u32> = (0..src.len() as u32)
                .filter(|j| src[*j as usize] == Scalar::ONE)
                .collect();
            assert_eq!(ones, want, "msm {i}");
        }
        assert_eq!(got.ones.map(|s| s.len)[1..], [3, 0]);
        let terms = |v: &[Scalar]| {
            v.iter()
                .filter(|s| !bool::from(s.is_zero()) && **s != Scalar::ONE)
                .count()
        };
        assert_eq!(got.terms, [terms(&l), 0, 1]);
        assert!(got.terms[0] > 0);
    }

    #[test]
    fn a_deferred_layout_holds_the_witness_in_place_of_the_evaluations() {
        let input = scalars(&[1, 5]);
        let aux: Vec<Scalar> = (0..PIECE as u64 + 3).map(|i| Scalar::from(i * 7)).collect();
        let layout = Layout::plan(StagePlan {
            rows: 1000,
            tails: [aux.len(), 4, 4],
            witness: Some(input.len() + aux.len()),
        });
        assert!(layout.abc.iter().all(|s| s.len == 0));
        assert_eq!(layout.witness.len, input.len() + aux.len());
        assert!(layout.witness.at % 256 == 0 && layout.tails[0].at >= layout.witness.at);
        let mut block = vec![0xAAu8; layout.bytes];
        fill_witness(&mut block, layout.witness, [&input, &aux]);
        let want: Vec<Scalar> = input.iter().chain(&aux).copied().collect();
        assert_eq!(read(&block, layout.witness), want);
        // Nothing written past the section.
        let end = layout.witness.at + layout.witness.bytes(FR);
        assert!(block[end..layout.tails[0].at].iter().all(|b| *b == 0xAA));
    }
}
