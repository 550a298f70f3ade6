//! `--listen`: a TCP address (`127.0.0.1:9820`, the default) or `unix:///path` (a socket only
//! its owner can open), and the warning for a listener other hosts can reach.

use anyhow::{bail, Context, Result};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Where the server listens.
#[derive(Clone, Debug, PartialEq)]
pub enum Listen {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Reads `--listen`.
pub fn parse(s: &str) -> Result<Listen> {
    if let Some(path) = s.strip_prefix("unix://") {
        if !path.starts_with('/') {
            bail!(
                "`{s}`: a unix socket needs an absolute path, e.g. unix:///run/provetop/serve.sock"
            );
        }
        return Ok(Listen::Unix(PathBuf::from(path)));
    }
    provetop_telemetry::export::prometheus::parse_addr(s)
        .map(Listen::Tcp)
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// A warning for an address other hosts can reach: the proving interface has no
/// authentication, like cuzk's, and without TLS everything (the telemetry too) is plaintext.
/// None on loopback and for unix sockets.
pub fn exposure_warning(l: &Listen, tls: bool) -> Option<String> {
    let how = match tls {
        true => "TLS encrypts the connection, but cuzk's proving interface has no authentication",
        false => "gRPC here is plaintext with no authentication",
    };
    match l {
        Listen::Tcp(a) if !a.ip().is_loopback() => Some(format!(
            "listening on {a}, which other hosts can reach: {how}, so anyone who reaches it can \
             submit and cancel proofs"
        )),
        _ => None,
    }
}

/// The TLS identity of `--tls-cert` and `--tls-key` (PEM files), both or neither.
pub fn tls(
    cert: Option<&std::path::Path>,
    key: Option<&std::path::Path>,
) -> Result<Option<tonic::transport::ServerTlsConfig>> {
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(c), Some(k)) => (c, k),
        _ => bail!("--tls-cert and --tls-key go together: give both"),
    };
    let read = |p: &std::path::Path, flag: &str| -> Result<Vec<u8>> {
        let b = std::fs::read(p).with_context(|| format!("{flag} {}", p.display()))?;
        if !b.windows(11).any(|w| w == b"-----BEGIN ") {
            bail!("{flag} {}: not a PEM file", p.display());
        }
        Ok(b)
    };
    let identity =
        tonic::transport::Identity::from_pem(read(cert, "--tls-cert")?, read(key, "--tls-key")?);
    let config = tonic::transport::ServerTlsConfig::new().identity(identity);
    // A certificate and key that do not go together are found now, not at the first client.
    tonic::transport::Server::builder()
        .tls_config(config.clone())
        .map_err(|e| {
            let why = crate::attach::client::chain(e.to_string(), std::error::Error::source(&e));
            anyhow::anyhow!(
                "--tls-cert {} with --tls-key {}: {why}",
                cert.display(),
                key.display()
            )
        })?;
    Ok(Some(config))
}

/// Binds a unix socket readable and writable by its owner only. A stale socket left by an
/// earlier run is replaced; any other file at the path is refused.
pub fn bind_unix(path: &std::path::Path) -> Result<tokio::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_socket() {
            bail!("{}: exists and is not a socket", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("making {} owner-only", path.display()))?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            parse("127.0.0.1:9820").unwrap(),
            Listen::Tcp("127.0.0.1:9820".parse().unwrap())
        );
        assert_eq!(
            parse("unix:///tmp/x.sock").unwrap(),
            Listen::Unix("/tmp/x.sock".into())
        );
        assert!(parse("unix://rel.sock").is_err());
        assert!(parse("nonsense").is_err());
        assert!(exposure_warning(&parse("0.0.0.0:9820").unwrap(), false).is_some());
        assert!(exposure_warning(&parse("0.0.0.0:9820").unwrap(), true)
            .is_some_and(|w| w.contains("TLS")));
        assert!(exposure_warning(&parse("9820").unwrap(), false).is_none());
    }

    #[tokio::test]
    async fn the_socket_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _l = bind_unix(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        assert!(bind_unix(&dir.path().join("f")).is_err());
    }
}
