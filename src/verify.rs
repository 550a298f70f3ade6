//! `provetop verify`: filecoin-proofs' own verifier of the request's kind (`verify_seal`,
//! `verify_empty_sector_update_proof`, `verify_window_post`, `verify_winning_post`) over a
//! proof of a request file, with a verifying key only: Filecoin's `.vk` from the parameter
//! folder, `--vk FILE`, or the key of parameters made here (`--test-params`). It never makes
//! parameters (exit 0 verified, 1 not, 2 a key or input missing or bad, or a file that is not
//! proofs).

use anyhow::{anyhow, Context, Result};
use provetop_engine::params::{cache::ParamsCache, io, VerifyingKey};
use provetop_porep::Prepared;
use provetop_proto::cuzk::v1::SubmitProofRequest;
use std::path::PathBuf;

use crate::cli::VerifyArgs;
use crate::proof_file::Shape;
use crate::run::{usage, UsageError};

/// Filecoin's parameter folder when neither `--params-dir` nor `$FIL_PROOFS_PARAMETER_CACHE`
/// says, as filecoin-proofs has it.
const DEFAULT_PARAMS_DIR: &str = "/var/tmp/filecoin-proof-parameters";

/// Where the verifying key comes from.
pub enum Keys {
    /// A `.vk` file named outright.
    File(PathBuf),
    /// Filecoin's parameter folder: the circuit's `v28-<id>.vk` in it.
    Folder(PathBuf),
    /// Parameters made here, in this cache (None: the default one).
    Made(Option<PathBuf>),
}

impl Keys {
    /// Filecoin's folder of `dir`, `$FIL_PROOFS_PARAMETER_CACHE` or the default; read before
    /// filecoin-proofs is pointed elsewhere.
    pub fn folder(dir: Option<PathBuf>) -> Keys {
        let env = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        Keys::Folder(
            dir.or(env)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMS_DIR)),
        )
    }
}

pub fn main(args: &VerifyArgs) -> Result<i32> {
    let request = usage(crate::request_file::read(&args.request))?;
    let proof = usage(
        provetop_telemetry::input::read_regular(&args.proof, provetop_telemetry::input::SMALL_FILE)
            .with_context(|| format!("--proof {}", args.proof.display())),
    )?;
    // Its shape first: a file that is not proofs is bad input, a point off the curve a proof
    // that cannot verify, both said before parameters are read.
    match crate::proof_file::check(&args.proof, &proof) {
        Ok(_) => {}
        Err(Shape::Malformed(why)) => return Err(UsageError(anyhow::anyhow!("{why}")).into()),
        Err(Shape::Invalid(why)) => {
            println!("not verified: {why}");
            return Ok(1);
        }
    }
    let keys = match (&args.vk, args.test_params) {
        (Some(f), _) => Keys::File(f.clone()),
        (None, true) => Keys::Made(args.params_cache.clone()),
        (None, false) => Keys::folder(args.params_dir.clone()),
    };
    let checker = Checker::new(&request, keys)?;
    let verifier = checker.proof.kind().verifier();
    match checker.check(&proof)? {
        true => {
            println!("verified by {verifier}: {}", checker.proof.describe());
            Ok(0)
        }
        false => {
            println!("not verified: {verifier} rejected {}", args.proof.display());
            Ok(1)
        }
    }
}

/// Checks proofs of one request with filecoin-proofs, as often as asked.
pub struct Checker {
    proof: Prepared,
    vk: VerifyingKey,
}

impl Checker {
    /// The request's statement and its circuit's verifying key from `keys`. A request that
    /// does not check, or a key that is missing or not one, is bad input.
    pub fn new(request: &SubmitProofRequest, keys: Keys) -> Result<Checker> {
        // The key goes to a private folder of this process, where filecoin-proofs reads it.
        provetop_porep::filecoin::configure(None)?;
        let (request, checked) = usage(crate::cuzk::checked(request))?;
        let (kind, size) = (checked.kind, checked.size);
        if let Some(note) = crate::cuzk::size_note(&request, size) {
            tracing::warn!("verify: {note}");
            eprintln!("verify: warning: {note}");
        }
        // The name `bench` gives the circuit: the parameter cache is shared.
        let name = format!("{kind}-{size}");
        let proof = usage(request.prepare(checked, None, &name))?;
        let cache_id = &proof.circuits().cache_id;
        let (path, whole, how) = match keys {
            Keys::File(f) => (f, true, "--vk"),
            Keys::Folder(d) => (
                d.join(provetop_porep::filecoin::vk_file_name(cache_id)),
                true,
                "Filecoin's verifying key (--params-dir, $FIL_PROOFS_PARAMETER_CACHE)",
            ),
            Keys::Made(cache) => {
                let workload = proof.circuits().workload();
                let shape = workload.shape().context("the circuit's shape")?;
                (
                    ParamsCache::new(cache).path_for(&workload.label(), &shape),
                    false,
                    "parameters made here (--test-params): run serve --test-params or bench first",
                )
            }
        };
        if !path.is_file() {
            usage::<()>(Err(anyhow!("no {} ({how})", path.display())))?;
        }
        let vk = usage(io::load_vk(&path, whole))?;
        Ok(Checker { proof, vk })
    }

    /// Whether filecoin-proofs accepts `proof`.
    pub fn check(&self, proof: &[u8]) -> Result<bool> {
        let ok = self.proof.verify(&self.vk, proof)?;
        Ok(ok == Some(true))
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        self.proof.cleanup();
    }
}
