//! The labels of the nodes a sparse sector's proofs open: the challenged nodes and their
//! parents, layer by layer. A parent that is not challenged gets a label drawn from the seed's
//! generator; a challenged node's label is computed by Filecoin's labelling function
//! (`create_label`, `create_label_exp`) from its parents' labels, in node order, so a node that
//! is both a parent and challenged has one column.
//!
//! Filecoin's labelling function reads parents from a whole layer in memory. The layers here
//! are address space reserved for a whole layer (`MAP_NORESERVE`) of which only the pages of
//! opened nodes are ever written: a 64 GiB sector's layer reserves 64 GiB and uses a few MB.

use anyhow::{bail, Result};
use filecoin_hashers::{Domain, Hasher};
use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use std::collections::{BTreeMap, BTreeSet};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_porep::stacked::create_label::single::{create_label, create_label_exp};
use storage_proofs_porep::stacked::StackedBucketGraph;

/// A label's size in bytes.
const NODE: usize = 32;

/// One layer of labels: a private anonymous mapping of a whole layer, pages made on first write.
struct Layer {
    ptr: *mut u8,
    len: usize,
}

impl Layer {
    fn new(nodes: usize) -> Result<Layer> {
        let len = nodes * NODE;
        // SAFETY: a fresh private anonymous mapping, checked below; nothing else refers to it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            bail!(
                "reserving {len} bytes of address space for a label layer: {}",
                std::io::Error::last_os_error()
            );
        }
        // Huge pages would make each written label cost 2 MiB; a refusal only costs memory.
        // SAFETY: the range is the mapping just made.
        unsafe { libc::madvise(ptr, len, libc::MADV_NOHUGEPAGE) };
        Ok(Layer {
            ptr: ptr.cast(),
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    fn label(&self, node: usize) -> [u8; NODE] {
        let mut out = [0u8; NODE];
        out.copy_from_slice(&self.bytes()[node * NODE..(node + 1) * NODE]);
        out
    }

    fn set(&mut self, node: usize, label: &[u8; NODE]) {
        self.bytes_mut()[node * NODE..(node + 1) * NODE].copy_from_slice(label);
    }
}

impl Drop for Layer {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made; no slice of it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Every opened node's column: its label in each layer, from layer 1.
pub type Columns<D> = BTreeMap<usize, Vec<D>>;

/// Each challenged node's parents (base, then expander), as the stacked graph gives them.
pub fn parents<H: Hasher>(
    graph: &StackedBucketGraph<H>,
    challenged: &BTreeSet<usize>,
) -> Result<BTreeMap<usize, Vec<u32>>> {
    challenged
        .iter()
        .map(|&c| {
            let mut p = vec![0u32; graph.degree()];
            graph.parents(c, &mut p)?;
            Ok((c, p))
        })
        .collect()
}

/// The columns of the challenged nodes and their parents over `layers` layers. `tamper`, a
/// (node, layer) of a challenged node, flips a bit of that label after it is computed: a
/// sector that must fail the label check, for tests.
pub fn columns<H: Hasher>(
    graph: &StackedBucketGraph<H>,
    replica_id: &H::Domain,
    layers: usize,
    parents: &BTreeMap<usize, Vec<u32>>,
    rng: &mut ChaCha20Rng,
    tamper: Option<(usize, usize)>,
) -> Result<Columns<H::Domain>> {
    let base = graph.base_graph().degree();
    let mut opened: BTreeSet<usize> = parents.keys().copied().collect();
    for (c, p) in parents {
        // Filecoin's labelling reads a node's base parents from the layer being written: each
        // must come before it, as the graph promises.
        if p[..base].iter().any(|q| *q as usize >= *c) {
            bail!("node {c} has a base parent at or after it");
        }
        opened.extend(p.iter().map(|q| *q as usize));
    }
    if let Some(n) = opened.iter().find(|n| **n >= graph.size()) {
        bail!("node {n} is outside a sector of {} nodes", graph.size());
    }
    let mut columns: Columns<H::Domain> = opened
        .iter()
        .map(|n| (*n, Vec::with_capacity(layers)))
        .collect();
    let (mut previous, mut current) = (Layer::new(graph.size())?, Layer::new(graph.size())?);
    for layer in 1..=layers {
        for (&node, column) in columns.iter_mut() {
            if parents.contains_key(&node) {
                if layer == 1 {
                    create_label(graph, None, replica_id, current.bytes_mut(), layer, node)?;
                } else {
                    create_label_exp(
                        graph,
                        None,
                        replica_id,
                        previous.bytes(),
                        current.bytes_mut(),
                        layer,
                        node,
                    )?;
                }
                if tamper == Some((node, layer)) {
                    let mut l = current.label(node);
                    l[0] ^= 1;
                    current.set(node, &l);
                }
            } else {
                let mut l = [0u8; NODE];
                rng.fill_bytes(&mut l);
                // A field element, as every label is (Filecoin clears the same two bits).
                l[NODE - 1] &= 0b0011_1111;
                current.set(node, &l);
            }
            column.push(H::Domain::try_from_bytes(&current.label(node))?);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Ok(columns)
}
