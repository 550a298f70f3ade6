//! The PoRep workload: a C1 output turned into the engine's [`CircuitSource`], registered under
//! `porep-<size>`, with everything checked before any long work starts.

use anyhow::{bail, Context, Result};
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher, SealCommitPhase1Output};
use provetop_engine::circuit::precompiled::Witness;
use std::path::PathBuf;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::sector::SectorId;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::c1::{parse_prover_id, C1};
use crate::compound::{self, checked, Partitions, Registered};
use crate::kind::Kind;
use crate::sector::{with_tree, SectorSize};
use crate::{filecoin, seal};
use provetop_engine::circuit::shape::hex;

/// What `--workload porep` was given.
#[derive(Clone, Debug, Default)]
pub struct PorepArgs {
    /// `--sector-size`: with `--c1`, the size the file must have; alone, the test sector to seal
    /// (2KiB, 8MiB, 512MiB) or the sparse sector to build (32GiB, 64GiB).
    /// None: the file's own.
    pub sector_size: Option<SectorSize>,
    /// `--c1`: a C1 output Lotus or Curio wrote. None: a test sector is sealed here.
    pub c1: Option<PathBuf>,
    /// `--prover-id`: 64 hex digits or an ID address; None: the file's or the sealed sector's.
    pub prover_id: Option<String>,
    /// `--sector-id`: the sector number; None: the file's or the sealed sector's.
    pub sector_id: Option<u64>,
    /// `--params-dir`: a folder with Filecoin's `.params` files; None: the engine's own parameters
    /// for the circuit.
    pub params_dir: Option<PathBuf>,
    /// Picks the test sector's data, ticket and seed when one is sealed here.
    pub seed: u64,
}

/// A registered PoRep workload.
pub struct Porep {
    /// Its circuits in the engine (one partition each: 1 for 2KiB, 10 for 32GiB).
    pub circuits: Registered,
    /// The checked C1 output its circuits are built from.
    pub c1: C1,
    /// The prover id, checked against the replica id where the sector id is known too; None:
    /// unknown, so no `verify_seal`.
    pub prover_id: Option<[u8; 32]>,
    /// The sector number; None: unknown, so no `verify_seal`.
    pub sector_id: Option<u64>,
}

/// Reads or seals the C1 output, checks it, and builds its circuits for the engine.
pub fn prepare(args: &PorepArgs, progress: &dyn Fn(&str)) -> Result<Porep> {
    // Before any of filecoin-proofs' code runs (sealing included): it reads its settings once.
    filecoin::configure(args.params_dir.as_deref())?;
    let given_prover = args.prover_id.as_deref().map(parse_prover_id).transpose()?;
    let (c1, sealed) = match (&args.c1, args.sector_size) {
        (Some(path), size) => (C1::read(path, size, None)?, None),
        // Too large to seal here: a sparse sector, built once and cached.
        (None, Some(size)) if !size.sealable() => {
            let c1 = crate::sparse::cached_porep(size, args.seed, progress)?;
            let ids = (c1.prover_id, c1.sector_id);
            (c1, Some(ids))
        }
        (None, Some(size)) => {
            let s = seal::sealed_c1(size, args.seed, progress)?;
            let ids = (Some(s.prover_id), Some(s.sector_id));
            (s.c1, Some(ids))
        }
        (None, None) => bail!("--workload porep needs --c1 FILE or --sector-size SIZE"),
    };
    let prover_id = given_prover.or(c1.prover_id).or(sealed.and_then(|s| s.0));
    let sector_id = args.sector_id.or(c1.sector_id).or(sealed.and_then(|s| s.1));
    let name = format!("porep-{}", c1.size);
    register(c1, prover_id, sector_id, args.params_dir.as_deref(), &name)
}

/// Builds the circuits of a checked C1 output as the engine's circuit `name`
/// (`Registered::workload`): what `prepare` does once it has the C1 output, and
/// what a served request does with the one it carries. The ids, where both are known, must give
/// the file's replica id.
pub fn register(
    c1: C1,
    prover_id: Option<[u8; 32]>,
    sector_id: Option<u64>,
    params_dir: Option<&std::path::Path>,
    name: &str,
) -> Result<Porep> {
    filecoin::configure(params_dir)?;
    let circuits = with_tree!(c1.size, build(&c1, prover_id, sector_id, params_dir, name))?;
    Ok(Porep {
        circuits,
        c1,
        prover_id,
        sector_id,
    })
}

impl Porep {
    /// filecoin-proofs' `verify_seal` over a sector's proofs (its partitions' 192-byte proofs
    /// in order) with `vk`. Needs the prover and sector ids; `None` when either is unknown.
    pub fn verify(
        &self,
        vk: &provetop_engine::params::VerifyingKey,
        proofs: &[u8],
    ) -> Result<Option<bool>> {
        let (Some(prover_id), Some(sector_id)) = (self.prover_id, self.sector_id) else {
            return Ok(None);
        };
        filecoin::provide_vk(&self.circuits, vk)?;
        let ok = with_tree!(
            self.c1.size,
            verify_seal(&self.c1, prover_id, SectorId::from(sector_id), proofs)
        )?;
        Ok(Some(ok))
    }
}

fn verify_seal<Tree: 'static + MerkleTreeTrait>(
    c1: &C1,
    prover_id: [u8; 32],
    sector_id: SectorId,
    proofs: &[u8],
) -> Result<bool> {
    filecoin_proofs::verify_seal::<Tree>(
        &c1.version.porep_config(c1.size),
        c1.comm_r,
        c1.comm_d,
        prover_id,
        sector_id,
        c1.ticket,
        c1.seed,
        proofs,
    )
}

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type PubIn<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    DefaultPieceDomain,
>;

/// The C1 output's vanilla proofs in Filecoin's own types (what `build` proves from).
fn vanilla_of<Tree: 'static + MerkleTreeTrait>(c1: &C1) -> Result<SealCommitPhase1Output<Tree>> {
    serde_json::from_value(c1.output.clone())
        .with_context(|| format!("its vanilla proofs are not those of a {} sector", c1.size))
}

/// Parses a C1 output's vanilla proofs for its sector size and counts its partitions: the
/// whole of what a file gives `--workload porep` before any circuit is built.
pub fn parse_vanilla(c1: &C1) -> Result<usize> {
    fn count<Tree: 'static + MerkleTreeTrait>(c1: &C1) -> Result<usize> {
        Ok(vanilla_of::<Tree>(c1)?.vanilla_proofs.len())
    }
    with_tree!(c1.size, count(c1))
}

/// One sector's partitions, as Filecoin's crates build them.
struct PorepParts<Tree: 'static + MerkleTreeTrait> {
    pub_in: PubIn<Tree>,
    pub_params: stacked::PublicParams<Tree>,
    vanilla: Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>>,
    /// The parameters' cache id: one per circuit structure (sector size and version).
    cache_id: String,
}

/// Checks a C1 output's vanilla proofs with storage-proofs' `verify_all_partitions` (and its
/// ids against its replica id, where it carries them): what every request is checked with
/// before it is proved, and every generated one before it is written. A refusal names the
/// partition, the challenge and the check that failed.
pub fn check(c1: &C1) -> Result<()> {
    fn run<Tree: 'static + MerkleTreeTrait>(c1: &C1) -> Result<()> {
        statement::<Tree>(c1, c1.prover_id, c1.sector_id).map(|_| ())
    }
    with_tree!(c1.size, run(c1))
}

/// A C1 output's statement and vanilla proofs in Filecoin's types, once they verify.
struct Statement<Tree: 'static + MerkleTreeTrait> {
    pub_params: stacked::PublicParams<Tree>,
    pub_in: PubIn<Tree>,
    vanilla: Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>>,
}

fn statement<Tree: 'static + MerkleTreeTrait>(
    c1: &C1,
    prover_id: Option<[u8; 32]>,
    sector_id: Option<u64>,
) -> Result<Statement<Tree>> {
    let config = c1.version.porep_config(c1.size);
    let out = vanilla_of::<Tree>(c1)?;
    let want = usize::from(config.partitions);
    if out.vanilla_proofs.len() != want {
        bail!(
            "it holds {} partitions; a {} sector has {want}",
            out.vanilla_proofs.len(),
            c1.size
        );
    }
    if let (Some(p), Some(s)) = (prover_id, sector_id) {
        let replica_id = stacked::generate_replica_id::<Tree::Hasher, _>(
            &p,
            s,
            &c1.ticket,
            c1.comm_d,
            &config.porep_id,
        );
        if replica_id != out.replica_id {
            bail!(
                "prover id {} and sector {s} do not give this file's replica id: wrong --prover-id or --sector-id?",
                hex(&p)
            );
        }
    }
    let compound = <Compound<Tree> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&compound_proof::SetupParams {
        vanilla_params: setup_params(&config)?,
        partitions: Some(want),
        priority: false,
    })?;
    let pub_in = stacked::PublicInputs {
        replica_id: out.replica_id,
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&c1.comm_d)?,
            comm_r: filecoin_proofs::as_safe_commitment(&c1.comm_r, "comm_r")?,
        }),
        k: None,
        seed: Some(c1.seed),
    };
    // filecoin-proofs' C2 checks the vanilla proofs before it proves them (CompoundProof's
    // sanity check): one that does not verify is refused here, in milliseconds, instead of
    // failing after a proof's minutes.
    if let Some(k) = out.vanilla_proofs.iter().position(Vec::is_empty) {
        bail!("its partition {k} holds no challenge proofs");
    }
    let verified = checked(|| {
        <StackedDrg<'_, Tree, DefaultPieceHasher> as ProofScheme<'_>>::verify_all_partitions(
            &compound.vanilla_params,
            &pub_in,
            &out.vanilla_proofs,
        )
    })
    .context("checking its vanilla proofs")?;
    if !verified {
        let failed = checked(|| {
            Ok(crate::diagnose::porep(
                &compound.vanilla_params,
                &pub_in,
                &out.vanilla_proofs,
            ))
        });
        let why = match failed {
            Ok(Some(what)) => what,
            Ok(None) => "storage-proofs' verifier refuses them".into(),
            Err(e) => format!("{e:#}"),
        };
        bail!(
            "its vanilla proofs do not verify against its comm_r, comm_d, ticket and seed: {why}"
        );
    }
    Ok(Statement {
        pub_params: compound.vanilla_params,
        pub_in,
        vanilla: out.vanilla_proofs,
    })
}

fn build<Tree: 'static + MerkleTreeTrait>(
    c1: &C1,
    prover_id: Option<[u8; 32]>,
    sector_id: Option<u64>,
    params_dir: Option<&std::path::Path>,
    name: &str,
) -> Result<Registered> {
    let Statement {
        pub_params,
        pub_in,
        vanilla,
    } = statement::<Tree>(c1, prover_id, sector_id)?;
    let cache_id = <Compound<Tree> as storage_proofs_core::parameter_cache::CacheableParameters<
        StackedCircuit<Tree, DefaultPieceHasher>,
        _,
    >>::cache_identifier(&pub_params);
    let what = c1.version.registered_name(c1.size);
    compound::params_file(params_dir, &cache_id, &what)?;
    let parts = PorepParts {
        pub_in,
        pub_params,
        vanilla,
        cache_id,
    };
    compound::register(name, parts, params_dir, &what)
}

impl<Tree: 'static + MerkleTreeTrait> Partitions for PorepParts<Tree> {
    type Circuit = StackedCircuit<Tree, DefaultPieceHasher>;

    fn count(&self) -> u32 {
        self.vanilla.len() as u32
    }

    fn circuit(&self, k: usize) -> Result<Self::Circuit> {
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::circuit(
            &self.pub_in,
            (),
            &self.vanilla[k],
            &self.pub_params,
            Some(k),
        )
    }

    fn blank(&self) -> Self::Circuit {
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(
            &self.pub_params,
        )
    }

    fn cache_id(&self) -> &str {
        &self.cache_id
    }

    fn kind(&self) -> Kind {
        Kind::Porep
    }

    fn parallel_witness(&self) -> bool {
        true
    }

    /// Each challenge on a core of its own, its SHA-256 computed natively (`witness`).
    fn witness(&self, k: usize, aux: usize) -> Result<Witness> {
        crate::witness::partition(
            &self.pub_in,
            &self.vanilla[k],
            self.pub_params.num_layers,
            aux,
        )
    }
}
