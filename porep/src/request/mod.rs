//! A Filecoin proof request (cuzk's `SubmitProofRequest`, without its wire format) checked and
//! turned into a proof of its kind ready to prove, or a message that says what is wrong with
//! it. Everything cheap is checked before the vanilla proofs are parsed; `serve` maps gRPC
//! messages onto [`Request`], `verify` and `bench --request` request files.

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

use crate::post::registered as post_registered;
use crate::{Inputs, Kind, Prepared, ProofVersion, SectorSize, C1};

/// The longest `request_id` kept: Curio's are `porep-<miner>-<sector>`.
pub const MAX_REQUEST_ID: usize = 256;

/// The largest vanilla proof taken: a 64 GiB sector's C1 output is about 100 MB of JSON with
/// lotus-bench's base64 wrapper around it; the rest of a 256 MiB message is under 1 MiB.
pub const MAX_VANILLA_BYTES: usize = (256 << 20) - (1 << 20);

/// The most vanilla proofs in one request: a 64GiB SnapDeals update has 16 partitions, a 32GiB
/// WindowPoSt partition 2,349 sectors.
pub const MAX_VANILLA_PROOFS: usize = 4096;

/// One proof request's fields, borrowed from whatever carried it (a gRPC message, a file):
/// cuzk's names and meanings.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The client's id of the request.
    pub request_id: &'a str,
    /// What it proves.
    pub kind: Kind,
    /// filecoin-proofs-api's registered proof number (seal, PoSt or update proof by `kind`).
    pub registered_proof: u64,
    /// The sector size the client names; only a label (see [`size_note`]).
    pub sector_size: u64,
    /// A PoRep C2 request's C1 output.
    pub vanilla_proof: &'a [u8],
    /// A PoSt or SnapDeals request's vanilla proofs.
    pub vanilla_proofs: &'a [Vec<u8>],
    /// The sector's number.
    pub sector_number: u64,
    /// The miner's actor id (`f0<id>`).
    pub miner_id: u64,
    /// A PoSt's randomness.
    pub randomness: &'a [u8],
    /// A WindowPoSt partition's index.
    pub partition_index: u32,
    /// A SnapDeals update's old replica commitment.
    pub comm_r_old: &'a [u8],
    /// A SnapDeals update's new replica commitment.
    pub comm_r_new: &'a [u8],
    /// A SnapDeals update's new data commitment.
    pub comm_d_new: &'a [u8],
}

/// What [`Request::check`] found: the kind and the sector size proved (the registered proof's).
/// Building the proof takes it, so the checks run once on the way to the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    /// What the request proves.
    pub kind: Kind,
    /// The registered proof's sector size.
    pub size: SectorSize,
}

/// cuzk's name of a proof kind, as its messages spell it (`POREP_SEAL_COMMIT`).
pub fn wire_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Porep => "POREP_SEAL_COMMIT",
        Kind::Snap => "SNAP_DEALS_UPDATE",
        Kind::WindowPost => "WINDOW_POST_PARTITION",
        Kind::WinningPost => "WINNING_POST",
    }
}

/// Filecoin's prover id of miner `f0<id>`: the LEB128 of the number, zero-padded.
pub fn prover_id_of_miner(miner_id: u64) -> [u8; 32] {
    crate::c1::parse_prover_id(&format!("f0{miner_id}")).expect("f0 and a number is an ID address")
}

impl Request<'_> {
    /// The checks that need no parsing: the id, lengths, the registered proof agreeing with
    /// the kind, and the fields the kind carries (and not the others'). The sector size is the
    /// registered proof's, as cuzk takes it: `sector_size` only labels (see [`size_note`]).
    pub fn check(&self) -> Result<Checked> {
        let r = self;
        if r.request_id.len() > MAX_REQUEST_ID {
            bail!(
                "request_id has {} bytes; at most {MAX_REQUEST_ID}",
                r.request_id.len()
            );
        }
        let kind = r.kind;
        let wire = wire_name(kind);
        let size = match kind {
            Kind::Porep => ProofVersion::from_registered_id(r.registered_proof)?.0,
            Kind::Snap => crate::snap::registered(r.registered_proof)?,
            _ => {
                let (post_kind, size, _) = post_registered(r.registered_proof)?;
                if post_kind != kind {
                    bail!(
                        "registered_proof {} ({}) is a {post_kind} proof, not a {wire}",
                        r.registered_proof,
                        crate::post::registered_name(r.registered_proof),
                    );
                }
                size
            }
        };
        let total: usize = r.vanilla_proofs.iter().map(Vec::len).sum();
        if r.vanilla_proof.len().max(total) > MAX_VANILLA_BYTES {
            bail!(
                "the vanilla proofs have {} bytes; at most {MAX_VANILLA_BYTES}",
                r.vanilla_proof.len().max(total)
            );
        }
        if r.vanilla_proofs.len() > MAX_VANILLA_PROOFS {
            bail!(
                "{} vanilla proofs; at most {MAX_VANILLA_PROOFS}",
                r.vanilla_proofs.len()
            );
        }
        match kind {
            Kind::Porep if r.vanilla_proof.is_empty() => {
                bail!("vanilla_proof is empty: a PoRep C2 request carries the C1 output")
            }
            Kind::Porep if !r.vanilla_proofs.is_empty() => bail!(
                "vanilla_proofs is for PoSt and SnapDeals; a PoRep C2 request sends vanilla_proof"
            ),
            Kind::Porep => {}
            _ if !r.vanilla_proof.is_empty() => bail!(
                "vanilla_proof is a PoRep C2 request's C1 output; a {wire} request sends vanilla_proofs"
            ),
            _ if r.vanilla_proofs.is_empty() => {
                bail!("vanilla_proofs is empty: a {wire} request carries its vanilla proofs")
            }
            _ => {}
        }
        Ok(Checked { kind, size })
    }

    /// The request's C1 output, checked against its sector size, registered proof, sector
    /// number and miner (a PoRep C2 request, `checked` by [`Request::check`]).
    pub fn c1(&self, checked: Checked) -> Result<(C1, [u8; 32])> {
        let r = self;
        if checked.kind != Kind::Porep {
            bail!("a {} request carries no C1 output", checked.kind);
        }
        let (_, version) = ProofVersion::from_registered_id(r.registered_proof)?;
        let c1 = C1::parse(r.vanilla_proof, Some(checked.size), Some(version))
            .map_err(|e| anyhow!("vanilla_proof: {e:#}"))?;
        if let Some(n) = c1.sector_id.filter(|n| *n != r.sector_number) {
            bail!(
                "vanilla_proof is for sector {n}, not sector_number {}",
                r.sector_number
            );
        }
        let prover_id = prover_id_of_miner(r.miner_id);
        if let Some(p) = c1.prover_id.filter(|p| *p != prover_id) {
            bail!(
                "vanilla_proof names prover id {}, not miner f0{}'s",
                provetop_engine::circuit::shape::hex(&p),
                r.miner_id
            );
        }
        Ok((c1, prover_id))
    }

    /// A PoSt or SnapDeals request's inputs (the fields its kind reads).
    pub fn inputs(&self) -> Inputs {
        let r = self;
        let mut i = Inputs::new(r.kind);
        i.registered_proof = r.registered_proof;
        i.prover_id = prover_id_of_miner(r.miner_id);
        i.randomness = r.randomness.to_vec();
        i.partition_index = r.partition_index;
        i.comm_r_old = r.comm_r_old.to_vec();
        i.comm_r_new = r.comm_r_new.to_vec();
        i.comm_d_new = r.comm_d_new.to_vec();
        i.vanilla_proofs = r.vanilla_proofs.to_vec();
        i
    }

    /// Builds the partitions' circuits of a request `checked` by [`Request::check`], as the
    /// engine's circuit `name` (with Filecoin's parameters from `params_dir`, where given). A
    /// C1 output for another sector or miner fails here (its replica id does not follow from
    /// theirs), and so does a vanilla proof that does not verify.
    pub fn prepare(
        &self,
        checked: Checked,
        params_dir: Option<&Path>,
        name: &str,
    ) -> Result<Prepared> {
        // A panic on a malformed proof is that request's error, not a request left unanswered.
        crate::guarded(|| match checked.kind {
            Kind::Porep => {
                let (c1, prover_id) = self.c1(checked)?;
                crate::source::register(
                    c1,
                    Some(prover_id),
                    Some(self.sector_number),
                    params_dir,
                    name,
                )
                .map(Prepared::Porep)
                .context("vanilla_proof")
            }
            _ => crate::prepared::register(&self.inputs(), params_dir, name),
        })
    }
}

/// A warning for a `sector_size` other than the registered proof's `size`: cuzk proves the
/// registered proof's size (Curio's own benchmark client sends 32 GiB in every request), and so
/// does provetop. None when they agree.
pub fn size_note(r: &Request, size: SectorSize) -> Option<String> {
    (r.sector_size != size.bytes()).then(|| {
        format!(
            "sector_size {} disagrees with registered_proof {} (a {size} sector, {} bytes): \
             proving a {size} sector, as cuzk does (sector_size only labels)",
            r.sector_size,
            r.registered_proof,
            size.bytes()
        )
    })
}

#[cfg(test)]
mod tests;
