//! `[fleet]`: the rigs `provetop fleet` watches when no ADDR is given, each with the name its
//! row shows and, for a rig across a network, the authority that signed its certificate.
//!
//! ```toml
//! [fleet]
//! rigs = [
//!   { name = "rig7", addr = "10.0.0.7:9820", ca = "/etc/provetop/ca.pem" },
//!   { addr = "10.0.0.8:9820" },
//! ]
//! ```

use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;

/// One rig to watch.
#[derive(Clone, Debug, PartialEq)]
pub struct Rig {
    /// What its row shows; its address when not named.
    pub name: String,
    pub addr: String,
    /// `--tls-ca` for this rig: TLS, checked against this authority.
    pub ca: Option<PathBuf>,
    /// The control token file its full dashboard presents (as `attach --token-file`).
    pub token: Option<PathBuf>,
}

/// The `[fleet]` table; an unknown key or a bad value names the key.
pub fn rigs(t: &toml::Table) -> Result<Vec<Rig>> {
    let mut out = vec![];
    for (key, v) in t {
        if key != "rigs" {
            bail!("unknown key `{key}`; [fleet] takes rigs = [{{ name, addr, ca, token }}, …]");
        }
        let list = v
            .as_array()
            .ok_or_else(|| anyhow!("rigs: expected an array of tables"))?;
        for (i, r) in list.iter().enumerate() {
            let r = r
                .as_table()
                .ok_or_else(|| anyhow!("rigs[{i}]: expected a table {{ name, addr, … }}"))?;
            let text = |k: &str| -> Result<Option<String>> {
                match r.get(k) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
                    Some(_) => bail!("rigs[{i}].{k}: expected a non-empty string"),
                }
            };
            if let Some(k) = r
                .keys()
                .find(|k| !["name", "addr", "ca", "token"].contains(&k.as_str()))
            {
                bail!("rigs[{i}]: unknown key `{k}` (name, addr, ca, token)");
            }
            let addr = text("addr")?.ok_or_else(|| anyhow!("rigs[{i}]: addr is missing"))?;
            out.push(Rig {
                name: text("name")?.unwrap_or_else(|| addr.clone()),
                addr,
                ca: text("ca")?.map(PathBuf::from),
                token: text("token")?.map(PathBuf::from),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rigs_are_read_with_their_names_and_bad_ones_are_named() {
        let t: toml::Table = toml::from_str(
            "rigs = [{ name = \"rig7\", addr = \"10.0.0.7:9820\", ca = \"ca.pem\" }, \
             { addr = \"10.0.0.8:9820\" }]",
        )
        .expect("TOML");
        let r = rigs(&t).expect("good rigs");
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].name.as_str(), r[1].name.as_str()),
            ("rig7", "10.0.0.8:9820")
        );
        assert_eq!(r[0].ca, Some(PathBuf::from("ca.pem")));
        for (bad, says) in [
            ("rigs = [{ name = \"x\" }]", "addr is missing"),
            ("rigs = [{ addr = \"a\", port = 1 }]", "unknown key `port`"),
            ("hosts = []", "unknown key `hosts`"),
        ] {
            let t: toml::Table = toml::from_str(bad).expect("TOML");
            let e = rigs(&t).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
