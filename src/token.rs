//! The control token that lets a viewer change a running server: read from a file only its
//! owner can read (serve's `control_token_file`, attach's `--token-file`), and compared as
//! SHA-256 digests in constant time, so neither its bytes nor its length leak through timing.

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use subtle::ConstantTimeEq;

/// The most bytes a token file may hold.
const MAX_BYTES: u64 = 4096;

/// A token's digest, as the server keeps it.
#[derive(Clone)]
pub struct Token([u8; 32]);

impl Token {
    /// The digest of `token`.
    pub fn of(token: &[u8]) -> Token {
        Token(Sha256::digest(token).into())
    }

    /// Whether `presented` is this token (constant time).
    pub fn matches(&self, presented: &[u8]) -> bool {
        Token::of(presented).0.ct_eq(&self.0).into()
    }
}

/// The token in `path` (`what` names where it was given, for the message): a regular file that
/// neither group nor others can read, holding 1 to 4096 bytes once trailing whitespace (a final
/// newline) is removed.
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    let shown = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("{what} {shown}"))?;
    if !meta.is_file() {
        bail!("{what} {shown}: not a regular file");
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "{what} {shown}: readable by group or others (mode {mode:03o}); a control token must \
             be its owner's alone: chmod 600 {shown}"
        );
    }
    if meta.len() > MAX_BYTES {
        bail!(
            "{what} {shown}: {} bytes; a token has at most {MAX_BYTES}",
            meta.len()
        );
    }
    let mut bytes = provetop_telemetry::input::read_regular(path, MAX_BYTES)
        .with_context(|| format!("{what} {shown}"))?;
    while bytes.last().is_some_and(u8::is_ascii_whitespace) {
        bytes.pop();
    }
    if bytes.is_empty() {
        bail!("{what} {shown}: empty; put a long random token in it (e.g. `openssl rand -hex 32`)");
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_themselves() {
        let t = Token::of(b"s3cret");
        assert!(t.matches(b"s3cret"));
        assert!(!t.matches(b"s3cre"));
        assert!(!t.matches(b"s3cret "));
        assert!(!t.matches(b""));
    }

    #[test]
    fn token_files_must_be_owner_only_and_not_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "abc123\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&p, "--token-file").unwrap(), b"abc123");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = read(&p, "--token-file").unwrap_err().to_string();
        assert!(e.contains("mode 640") && e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o604)).unwrap();
        assert!(read(&p, "x").is_err());
        std::fs::write(&p, " \n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert!(read(&p, "x").unwrap_err().to_string().contains("empty"));
        assert!(read(dir.path(), "x").is_err());
        assert!(read(&dir.path().join("none"), "x").is_err());
    }
}
