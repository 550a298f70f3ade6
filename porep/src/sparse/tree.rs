//! A Merkle tree of a whole sector of which only a few leaves are known: every other leaf is a
//! constant of its block (one block for a sector of one constant leaf), so a subtree inside a
//! block with no known leaf hashes to the same value at each level (computed once a block), and
//! only the paths above known leaves and the levels above the blocks are hashed. Its paths are
//! the ones the full tree would give, in Filecoin's proof layout (base, then sub-tree, then
//! top-tree levels).

use anyhow::{bail, Result};
use filecoin_hashers::Hasher;
use generic_array::typenum::Unsigned;
use merkletree::hash::Algorithm;
use std::collections::BTreeMap;
use storage_proofs_core::merkle::{base_path_length, compound_path_length, MerkleProof};

/// A sparse tree over `H` with the level arities of a tree type (its base levels, then its
/// sub-tree and top-tree levels where it has them).
pub struct SparseTree<H: Hasher> {
    arities: Vec<usize>,
    /// Leaves a block holds.
    block: usize,
    /// Each block's empty-subtree hash at each height whose subtrees fit in a block: index 0 is
    /// the block's constant leaf.
    empty: Vec<Vec<H::Domain>>,
    /// Each level's known nodes, by index (every node of a level above the blocks); the last
    /// level holds the root alone.
    levels: Vec<BTreeMap<usize, H::Domain>>,
}

/// One level of a path: the siblings in order and the node's place among them.
pub type PathLevel<D> = (Vec<D>, usize);

impl<H: Hasher> SparseTree<H> {
    /// A tree of `leaves` leaves shaped by arities `A` (base), `B` (sub-tree, 0 for none) and
    /// `C` (top tree, 0 for none), as Filecoin's tree types are; `known` holds the leaves that
    /// differ from `constant`.
    pub fn new<A: Unsigned, B: Unsigned, C: Unsigned>(
        leaves: usize,
        constant: H::Domain,
        known: BTreeMap<usize, H::Domain>,
    ) -> Result<Self> {
        Self::blocks::<A, B, C>(leaves, &[constant], known)
    }

    /// As [`SparseTree::new`], the leaves split into `constants.len()` equal blocks (a power
    /// of two), each block's untouched leaves its own constant.
    pub fn blocks<A: Unsigned, B: Unsigned, C: Unsigned>(
        leaves: usize,
        constants: &[H::Domain],
        known: BTreeMap<usize, H::Domain>,
    ) -> Result<Self> {
        let base = base_path_length::<A, B, C>(leaves);
        let mut arities = vec![A::to_usize(); base];
        arities.extend(
            [B::to_usize(), C::to_usize()]
                .into_iter()
                .filter(|a| *a > 0),
        );
        if arities.len() != compound_path_length::<A, B, C>(leaves)
            || arities.iter().product::<usize>() != leaves
        {
            bail!(
                "{leaves} leaves do not fill a tree of arities {}-{}-{}",
                A::to_usize(),
                B::to_usize(),
                C::to_usize()
            );
        }
        let blocks = constants.len();
        if !blocks.is_power_of_two() || leaves % blocks != 0 {
            bail!("{blocks} blocks do not split {leaves} leaves evenly");
        }
        if let Some(i) = known.keys().find(|i| **i >= leaves) {
            bail!("leaf {i} is outside a tree of {leaves} leaves");
        }
        let block = leaves / blocks;
        let mut hasher = H::Function::default();
        let mut empty: Vec<Vec<H::Domain>> = constants.iter().map(|c| vec![*c]).collect();
        let mut span = 1;
        for (height, arity) in arities.iter().enumerate() {
            span *= arity;
            if span > block {
                break;
            }
            for chain in empty.iter_mut() {
                hasher.reset();
                let children = vec![chain[height]; *arity];
                chain.push(hasher.multi_node(&children, height));
            }
        }
        let mut tree = SparseTree {
            arities: arities.clone(),
            block,
            empty,
            levels: vec![known],
        };
        let mut span = 1;
        for (height, arity) in arities.iter().enumerate() {
            span *= arity;
            // Above the blocks every node is hashed: there are few of them.
            let parents: Vec<usize> = match span > block {
                true => (0..leaves / span).collect(),
                false => tree.levels[height].keys().map(|i| i / arity).collect(),
            };
            let mut above = BTreeMap::new();
            for parent in parents {
                if above.contains_key(&parent) {
                    continue;
                }
                let children: Vec<H::Domain> = (0..*arity)
                    .map(|j| tree.node(height, parent * arity + j))
                    .collect();
                hasher.reset();
                above.insert(parent, hasher.multi_node(&children, height));
            }
            tree.levels.push(above);
        }
        Ok(tree)
    }

    /// The node at `index` of the level `height` above the leaves.
    pub fn node(&self, height: usize, index: usize) -> H::Domain {
        if let Some(d) = self.levels.get(height).and_then(|l| l.get(&index)) {
            return *d;
        }
        let span: usize = self.arities[..height].iter().product();
        self.empty[index * span / self.block][height]
    }

    /// The root.
    pub fn root(&self) -> H::Domain {
        self.node(self.arities.len(), 0)
    }

    /// The leaf at `index`.
    pub fn leaf(&self, index: usize) -> H::Domain {
        self.node(0, index)
    }

    /// The path of leaf `index`, leaf to root.
    pub fn path(&self, index: usize) -> Vec<PathLevel<H::Domain>> {
        let mut at = index;
        let mut path = Vec::with_capacity(self.arities.len());
        for (height, arity) in self.arities.iter().enumerate() {
            let (group, place) = (at / arity, at % arity);
            let siblings = (0..*arity)
                .filter(|j| *j != place)
                .map(|j| self.node(height, group * arity + j))
                .collect();
            path.push((siblings, place));
            at = group;
        }
        path
    }

    /// Filecoin's inclusion proof of leaf `index`, for a tree of arities `A`-`B`-`C` (those
    /// the tree was built with).
    pub fn proof<A, B, C>(&self, index: usize) -> MerkleProof<H, A, B, C>
    where
        A: filecoin_hashers::PoseidonArity,
        B: filecoin_hashers::PoseidonArity,
        C: filecoin_hashers::PoseidonArity,
    {
        MerkleProof::from_parts(self.leaf(index), self.root(), self.path(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_hashers::poseidon::PoseidonHasher;
    use filecoin_hashers::sha256::Sha256Hasher;
    use filecoin_hashers::Domain;
    use generic_array::typenum::{U0, U2, U8};
    use merkletree::merkle::MerkleTree;
    use merkletree::store::VecStore;
    use storage_proofs_core::merkle::MerkleProofTrait;

    type PDomain = <PoseidonHasher as Hasher>::Domain;

    fn domain(x: u8) -> PDomain {
        let mut b = [0u8; 32];
        b[0] = x;
        PDomain::try_from_bytes(&b).unwrap()
    }

    /// A sparse tree's root and paths are those of merkletree's full tree of the same leaves.
    #[test]
    fn matches_the_full_tree() {
        let leaves = 64;
        let known: BTreeMap<usize, PDomain> = [(3, domain(7)), (9, domain(8)), (63, domain(9))]
            .into_iter()
            .collect();
        let constant = domain(1);
        let all: Vec<PDomain> = (0..leaves)
            .map(|i| *known.get(&i).unwrap_or(&constant))
            .collect();
        let full: MerkleTree<PDomain, <PoseidonHasher as Hasher>::Function, VecStore<PDomain>, U8> =
            MerkleTree::new(all).unwrap();
        let sparse =
            SparseTree::<PoseidonHasher>::new::<U8, U0, U0>(leaves, constant, known).unwrap();
        assert_eq!(sparse.root(), full.root());
        for i in [0, 3, 9, 62] {
            let p = sparse.proof::<U8, U0, U0>(i);
            assert!(p.validate(i), "leaf {i}");
            assert_eq!(p.root(), full.root());
        }
        // A sub-tree level (8-8-0 on 512 leaves) gives paths Filecoin's proofs accept.
        let t = SparseTree::<PoseidonHasher>::new::<U8, U8, U0>(512, constant, BTreeMap::new())
            .unwrap();
        assert!(t.proof::<U8, U8, U0>(300).validate(300));
        // The binary SHA-256 tree of all-zero data.
        let zero = <Sha256Hasher as Hasher>::Domain::default();
        let d = SparseTree::<Sha256Hasher>::new::<U2, U0, U0>(64, zero, BTreeMap::new()).unwrap();
        assert!(d.proof::<U2, U0, U0>(17).validate(17));
        assert!(SparseTree::<Sha256Hasher>::new::<U2, U0, U0>(60, zero, BTreeMap::new()).is_err());

        // Constant within each of 4 blocks of 16 leaves (a block not a whole subtree of
        // arity 8), one leaf known: the full tree's root and paths.
        let consts = [domain(2), domain(3), domain(4), domain(5)];
        let known: BTreeMap<usize, PDomain> = [(20, domain(9))].into_iter().collect();
        let all: Vec<PDomain> = (0..leaves)
            .map(|i| *known.get(&i).unwrap_or(&consts[i / 16]))
            .collect();
        let full: MerkleTree<PDomain, <PoseidonHasher as Hasher>::Function, VecStore<PDomain>, U8> =
            MerkleTree::new(all).unwrap();
        let b = SparseTree::<PoseidonHasher>::blocks::<U8, U0, U0>(leaves, &consts, known).unwrap();
        assert_eq!(b.root(), full.root());
        for i in [0, 20, 33, 63] {
            let p = b.proof::<U8, U0, U0>(i);
            assert!(p.validate(i), "leaf {i}");
            assert_eq!(p.root(), full.root());
        }
    }
}
