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
        let b = provetop_telemetry::input::read_regular(p, provetop_telemetry::input::SMALL_FILE)
            .with_context(|| format!("{flag} {}", p.display()))?;
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

/// A listener bound before the engine starts, so a listen failure is an error of the command
/// line (exit 2), found in milliseconds.
#[derive(Debug)]
pub enum Bound {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

impl Bound {
    /// The tokio listener of a bound socket; inside the runtime.
    pub fn into_tokio(self) -> Result<Tokio> {
        Ok(match self {
            Bound::Tcp(l) => {
                l.set_nonblocking(true)?;
                Tokio::Tcp(tokio::net::TcpListener::from_std(l)?)
            }
            Bound::Unix(l, path) => {
                l.set_nonblocking(true)?;
                Tokio::Unix(tokio::net::UnixListener::from_std(l)?, path)
            }
        })
    }
}

/// A bound listener in the runtime.
pub enum Tokio {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener, PathBuf),
}

/// Binds `l`; every failure says what to change, prefixed with `--listen ADDR`.
pub fn bind(l: &Listen) -> Result<Bound> {
    match l {
        Listen::Tcp(addr) => std::net::TcpListener::bind(addr)
            .map(Bound::Tcp)
            .map_err(|e| {
                let hint = match e.kind() {
                    std::io::ErrorKind::AddrInUse => {
                        ": another process listens there (a second serve?); give another port"
                    }
                    std::io::ErrorKind::AddrNotAvailable => ": no interface of this host has it",
                    std::io::ErrorKind::PermissionDenied => ": ports below 1024 need privileges",
                    _ => "",
                };
                anyhow::anyhow!("--listen {addr}: cannot listen: {e}{hint}")
            }),
        Listen::Unix(path) => bind_unix(path)
            .map(|u| Bound::Unix(u, path.clone()))
            .with_context(|| format!("--listen unix://{}", path.display())),
    }
}

/// Binds a unix socket readable and writable by its owner only. A stale socket left by an
/// earlier run is replaced; a socket a live server answers on, and any other file at the path,
/// are refused.
pub fn bind_unix(path: &std::path::Path) -> Result<std::os::unix::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let t = m.file_type();
        if t.is_symlink() {
            bail!("is a symbolic link; give the socket's own path");
        }
        if !t.is_socket() {
            bail!(
                "exists and is not a socket (a {}); remove it or give another path",
                if t.is_dir() { "folder" } else { "file" }
            );
        }
        // Taking over a live server's path would leave it running, unreachable.
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!("a server is listening on this socket already; stop it or give another path");
        }
        std::fs::remove_file(path).context("removing the stale socket")?;
    }
    match path.parent() {
        Some(dir) if !dir.is_dir() => bail!("no folder {} to put the socket in", dir.display()),
        _ => {}
    }
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(|e| {
        let long = path.as_os_str().len() >= 108;
        let hint = if long {
            " (a socket's path has at most 107 bytes)"
        } else {
            ""
        };
        anyhow::anyhow!("cannot listen: {e}{hint}")
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .context("making the socket owner-only")?;
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

    #[test]
    fn the_socket_is_owner_only_and_a_live_one_is_never_taken_over() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let live = bind_unix(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let e = format!("{:#}", bind_unix(&path).unwrap_err());
        assert!(e.contains("listening on this socket already"), "{e}");
        // Still the first server's: a client reaches it.
        std::os::unix::net::UnixStream::connect(&path).unwrap();
        live.accept().unwrap();
        // Once it is gone, its socket is stale and replaced.
        drop(live);
        bind_unix(&path).unwrap();
    }

    #[test]
    fn every_listen_failure_is_an_error_that_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let long = dir.path().join("x".repeat(120));
        let cases = [
            (file.clone(), "not a socket (a file)"),
            (link, "symbolic link"),
            (dir.path().to_path_buf(), "not a socket (a folder)"),
            (long, "at most 107 bytes"),
            (dir.path().join("no/s.sock"), "no folder"),
        ];
        for (path, why) in cases {
            let e = format!("{:#}", bind(&Listen::Unix(path.clone())).unwrap_err());
            assert!(e.starts_with("--listen unix://") && e.contains(why), "{e}");
        }
        assert_eq!(
            std::fs::read(&file).unwrap(),
            b"x",
            "the file is left alone"
        );
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = bind(&Listen::Tcp(addr)).unwrap_err().to_string();
        assert!(e.contains("another process listens there"), "{e}");
    }
}
