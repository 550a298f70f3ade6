//! filecoin-proofs' side: where its settings point (parameters, the graph's parent cache), and
//! our verifying key handed to its own verifiers (`verify_seal` and the others), which read it
//! from its parameter folder.

use anyhow::{Context, Result};
use provetop_engine::params::{io, VerifyingKey};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use storage_proofs_core::parameter_cache::verifying_key_id;

use crate::compound::Registered;

/// Points filecoin-proofs at `params_dir` (read only) or, without one, at a folder of this
/// process where our verifying key is written, and its parent cache under ours. Its settings
/// are read once per process, so this runs before any of its code; later calls return the
/// folder the first one chose.
pub fn configure(params_dir: Option<&Path>) -> Result<PathBuf> {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    if let Some(d) = DIR.get() {
        return Ok(d.clone());
    }
    let dir = match params_dir {
        Some(d) => d.to_path_buf(),
        // A fresh folder only this user can open, under a name no one can guess or have made
        // beforehand; removed by `cleanup`.
        None => private_dir()?,
    };
    let parents = provetop_engine::params::cache::cache_root()
        .join("porep")
        .join("parents");
    std::fs::create_dir_all(&parents).with_context(|| format!("creating {}", parents.display()))?;
    // Set before filecoin-proofs first reads its settings, while only this thread runs its code.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", &parents);
    Ok(DIR.get_or_init(|| dir).clone())
}

/// The name of Filecoin's verifying key file of a circuit's parameters (`v28-….vk`).
pub fn vk_file_name(cache_id: &str) -> String {
    verifying_key_id(cache_id)
}

/// A new private temporary folder (mode 0700, a random name) kept until `cleanup`.
fn private_dir() -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    // Made with the mode, not changed after: no moment when others may enter it.
    let dir = tempfile::Builder::new()
        .prefix("provetop-vk-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .context("creating a private folder for the verifying key")?;
    Ok(dir.keep())
}

/// Removes the per-process key folder of [`configure`], if it made one.
pub fn cleanup(circuits: &Registered) {
    if circuits.params_file.is_none() {
        let _ = std::fs::remove_dir_all(&circuits.vk_dir);
    }
}

/// Puts `vk` where filecoin-proofs' verifiers read the key of `circuits` (for parameters we
/// generated; Filecoin's own come with their `.vk`).
pub(crate) fn provide_vk(circuits: &Registered, vk: &VerifyingKey) -> Result<()> {
    if circuits.params_file.is_some() {
        return Ok(());
    }
    let vk_path = circuits.vk_dir.join(verifying_key_id(&circuits.cache_id));
    let mut bytes = vec![];
    io::write_vk(vk, &mut bytes)?;
    // Into the folder `configure` made: never one made again under its name.
    std::fs::write(&vk_path, bytes).with_context(|| format!("writing {}", vk_path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_folder_is_private_and_never_a_planted_one() {
        use std::os::unix::fs::PermissionsExt;
        let cache = tempfile::tempdir().unwrap();
        // The parent cache goes under it, not the user's; no other test here reads it.
        std::env::set_var("XDG_CACHE_HOME", cache.path());
        // A folder planted under the name a predictable scheme would use is not taken.
        let planted = std::env::temp_dir().join(format!("provetop-vk-{}", std::process::id()));
        let made = std::fs::create_dir(&planted).is_ok();
        let dir = configure(None).unwrap();
        if made {
            let _ = std::fs::remove_dir(&planted);
        }
        assert_ne!(dir, planted);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}: {mode:o}", dir.display());
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "empty");
        let other = private_dir().unwrap();
        assert_ne!(other, dir, "a fresh name each time");
        for d in [dir, other] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }
}
