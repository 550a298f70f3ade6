//! A PoRep partition's witness for the pre-compiled path: each challenge on a core of its own,
//! and every SHA-256 computed natively instead of through the gadget.
//!
//! `StackedCircuit::synthesize` (storage-proofs-porep 19.1, stacked/circuit/proof.rs)
//! allocates a prelude (replica id and its bits, the commitments, comm_r's hash), then each
//! challenge's `Proof::synthesize` (params.rs), which reads only the prelude's values. So the
//! prelude runs once as Filecoin wrote it, and every challenge runs in a system of its own:
//! `partition` makes the allocations of `Proof::synthesize` in its order, through Filecoin's
//! own gadgets except where they hash with SHA-256 (the labels, [`label`], and comm_d's tree,
//! [`comm_d_inclusion`]): nine tenths of the witness under the gadget, a few percent natively.
//! The pieces are appended in the challenges' order. The test against the plain path
//! (tests/precompiled.rs) compares every value, so a change of Filecoin's circuit cannot pass
//! unnoticed.

use anyhow::{anyhow, bail, Context, Result};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::multipack;
use blstrs::Scalar as Fr;
use ff::PrimeField;
use filecoin_hashers::poseidon::PoseidonFunction;
use filecoin_hashers::{HashFunction, Hasher, PoseidonArity};
use filecoin_proofs::DefaultPieceHasher;
use generic_array::typenum::{U11, U2};
use provetop_engine::circuit::precompiled::sha256::{self, Bit};
use provetop_engine::circuit::precompiled::{Witness, WitnessCs};
use rayon::prelude::*;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::{
    encode::encode, insertion::insert, uint64::UInt64, variables::Root,
};
use storage_proofs_core::merkle::{
    DiskStore, MerkleProofTrait, MerkleTreeTrait, MerkleTreeWrapper,
};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{self, StackedCircuit, TOTAL_PARENTS};

type Vanilla<Tree> = stacked::Proof<Tree, DefaultPieceHasher>;
type PubIn<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    <DefaultPieceHasher as Hasher>::Domain,
>;

/// The prelude's values each challenge reads, allocated in a scratch system (a witness never
/// reads their variables).
struct Shared {
    comm_c: AllocatedNum<Fr>,
    comm_r_last: AllocatedNum<Fr>,
    replica_id: Vec<Bit>,
}

/// The witness of the partition whose challenges' vanilla proofs are `vanilla`, `layers`
/// layers deep, with room for `aux` values.
pub fn partition<Tree: 'static + MerkleTreeTrait>(
    pub_in: &PubIn<Tree>,
    vanilla: &[Vanilla<Tree>],
    layers: usize,
    aux: usize,
) -> Result<Witness> {
    // What `StackedCompound::circuit` gives the circuit, with its checks.
    let first = vanilla.first().context("a partition without challenges")?;
    let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
    if !vanilla
        .iter()
        .all(|p| p.comm_r_last() == comm_r_last && p.comm_c() == comm_c)
    {
        bail!("the partition's vanilla proofs disagree on comm_r_last or comm_c");
    }
    let tau = pub_in.tau.as_ref().context("no comm_d and comm_r")?;
    let mut cs = WitnessCs::with_capacity(aux);
    StackedCircuit::<Tree, DefaultPieceHasher>::synthesize(
        &mut cs,
        Some(pub_in.replica_id),
        Some(tau.comm_d),
        Some(tau.comm_r),
        Some(comm_r_last),
        Some(comm_c),
        vec![],
    )
    .map_err(|e| anyhow!("witness generation failed: {e}"))?;
    let shared = {
        let mut scratch = WitnessCs::default();
        let mut num = |v: Fr| AllocatedNum::alloc(&mut scratch, || Ok(v));
        let (comm_c, comm_r_last) = (num(comm_c.into())?, num(comm_r_last.into())?);
        let id = num(pub_in.replica_id.into())?;
        let replica_id = bits(reverse_bit_numbering(id.to_bits_le(&mut scratch)?))?;
        Shared {
            comm_c,
            comm_r_last,
            replica_id,
        }
    };
    let pieces = circuit_proofs(
        StackedCircuit::<Tree, DefaultPieceHasher>::synthesize::<&mut WitnessCs>,
        vanilla,
    )
    .into_par_iter()
    .zip(vanilla)
    .map(|(p, v)| {
        let mut piece = WitnessCs::default();
        let cs = &mut piece;
        // `Proof::synthesize`, allocation by allocation.
        let data_leaf = AllocatedNum::alloc(&mut *cs, || {
            p.data_leaf.ok_or(SynthesisError::AssignmentMissing)
        })?;
        comm_d_inclusion(cs, &v.comm_d_proofs.as_options(), &data_leaf)?;
        // Each parent's column, its hash and its inclusion in comm_c: DRG parents, then
        // expander parents.
        let drg_count = p.drg_parents_proofs.len();
        let mut columns = vec![];
        for parent in p.drg_parents_proofs.into_iter().chain(p.exp_parents_proofs) {
            let (col, path) = parent.alloc(&mut *cs)?;
            let hash = col.hash(&mut *cs)?;
            inclusion(&mut *cs, path, &shared.comm_c, &hash)?;
            columns.push(
                (1..=layers)
                    .map(|l| col.get_value(l).clone())
                    .collect::<Vec<_>>(),
            );
        }
        let (drg, exp) = columns.split_at(drg_count);
        let node = UInt64::alloc(&mut *cs, p.challenge)?;
        node.pack_into_input(&mut *cs)?;
        let node = bits(node.to_bits_be())?;
        let mut labels = Vec::with_capacity(layers);
        for layer in 1..=layers {
            let mut parents = vec![];
            for col in drg {
                parents.push(bits(reverse_bit_numbering(
                    col[layer - 1].to_bits_le(&mut *cs)?,
                ))?);
            }
            if layer > 1 {
                for col in exp {
                    parents.push(bits(reverse_bit_numbering(
                        col[layer - 2].to_bits_le(&mut *cs)?,
                    ))?);
                }
            }
            labels.push(label(
                cs,
                &shared.replica_id,
                &parents,
                layer as u32,
                &node,
            )?);
        }
        let last = labels.last().context("no layers")?;
        let encoded = encode(&mut *cs, last, &data_leaf)?;
        inclusion(&mut *cs, p.comm_r_last_path, &shared.comm_r_last, &encoded)?;
        let column = match labels.len() {
            2 => PoseidonFunction::hash_multi_leaf_circuit::<U2, _>(&mut *cs, &labels, 0)?,
            11 => PoseidonFunction::hash_multi_leaf_circuit::<U11, _>(&mut *cs, &labels, 0)?,
            n => bail!("no column hash for {n} layers"),
        };
        inclusion(&mut *cs, p.comm_c_path, &shared.comm_c, &column)?;
        Ok(piece)
    })
    .collect::<Result<Vec<_>>>()?;
    for piece in &pieces {
        cs.extend(piece);
    }
    Ok(cs.finish())
}

/// storage-proofs' circuit-side proofs of the challenges. Their type sits in a private module
/// (its fields are public): it is reached through the signature of `StackedCircuit::synthesize`,
/// which takes a vector of them.
fn circuit_proofs<V: Clone, P: From<V>, A, B, C, D, E, F, R>(
    _synthesize: fn(A, B, C, D, E, F, Vec<P>) -> R,
    vanilla: &[V],
) -> Vec<P> {
    vanilla.iter().cloned().map(P::from).collect()
}

fn bits(b: Vec<Boolean>) -> Result<Vec<Bit>, SynthesisError> {
    b.iter().map(Bit::of).collect()
}

/// `enforce_inclusion` of params.rs: `leaf` is in the tree of `root` along `path`.
fn inclusion<H, U, V, W>(
    cs: &mut WitnessCs,
    path: AuthPath<H, U, V, W>,
    root: &AllocatedNum<Fr>,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError>
where
    H: 'static + Hasher,
    U: 'static + PoseidonArity,
    V: 'static + PoseidonArity,
    W: 'static + PoseidonArity,
{
    let root = Root::from_allocated::<WitnessCs>(root.clone());
    let leaf = Root::from_allocated::<WitnessCs>(leaf.clone());
    PoRCircuit::<MerkleTreeWrapper<H, DiskStore<H::Domain>, U, V, W>>::synthesize(
        cs, leaf, path, root, true,
    )
}

/// `enforce_inclusion` in comm_d's binary SHA-256 tree (`PoRCircuit` with `SubPath::synthesize`
/// and `Sha256Function::hash_multi_leaf_circuit`), each level's hash computed natively. The
/// root is compared, which allocates nothing.
fn comm_d_inclusion(
    cs: &mut WitnessCs,
    path: &[(Vec<Option<Fr>>, Option<usize>)],
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut index_bits = Vec::with_capacity(path.len());
    for (hashes, index) in path {
        let bit = AllocatedBit::alloc(&mut *cs, index.map(|i| i & 1 == 1))?;
        index_bits.push(Boolean::from(bit));
        let siblings = hashes
            .iter()
            .map(|h| AllocatedNum::alloc(&mut *cs, || h.ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<Vec<_>, _>>()?;
        let pair = insert(cs, &cur, &index_bits[index_bits.len() - 1..], &siblings)?;
        // Each number's 255 bits, padded to 32 bytes, in big-endian bit order per byte.
        let mut input = Vec::with_capacity(512);
        for num in &pair {
            let mut le = bits(num.to_bits_le(&mut *cs)?)?;
            le.push(Bit::Constant(false));
            input.extend(le.chunks(8).flat_map(|byte| byte.iter().rev().copied()));
        }
        cur = packed_sha256(cs, &input)?;
    }
    multipack::pack_into_inputs(cs, &index_bits)
}

/// The gadget's SHA-256 of `input`, natively, with its digest's bits reversed per byte and the
/// capacity's worth packed into the number `multipack::pack_bits` allocates.
fn packed_sha256(cs: &mut WitnessCs, input: &[Bit]) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let digest = sha256::sha256(cs.aux_mut(), input);
    let bits: Vec<Bit> = digest
        .chunks(8)
        .flat_map(|byte| byte.iter().rev().copied())
        .collect();
    let value = sha256::pack(&bits[..Fr::CAPACITY as usize]);
    AllocatedNum::alloc(cs, || Ok(value))
}

/// `create_label_circuit`: SHA-256 of replica id ‖ layer ‖ node ‖ 37 parents (each padded to
/// 32 bytes), computed natively, then packed into the number the gadget allocates.
fn label(
    cs: &mut WitnessCs,
    replica_id: &[Bit],
    parents: &[Vec<Bit>],
    layer: u32,
    node: &[Bit],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let pad = |v: &mut Vec<Bit>, to: usize| {
        while v.len() % to != 0 {
            v.push(Bit::Constant(false));
        }
    };
    let mut input = replica_id.to_vec();
    pad(&mut input, 256);
    input.extend((0..32).rev().map(|i| Bit::Constant(layer >> i & 1 == 1)));
    input.extend_from_slice(node);
    pad(&mut input, 512);
    // The parents repeated in order up to 37, as `Proof::synthesize` expands them.
    for parent in parents.iter().cycle().take(TOTAL_PARENTS) {
        input.extend_from_slice(parent);
        pad(&mut input, 256);
    }
    // The digest through `reverse_bit_numbering` into `pack_bits`, as in `hash_circuit`.
    packed_sha256(cs, &input)
}
