//! Commit-phase-1 outputs, as Lotus and Curio write them.
//!
//! Three layouts are read: filecoin-proofs-api's `SealCommitPhase1Output` as JSON (with its
//! `registered_proof` and the vanilla proofs tagged by sector size, as Lotus writes it),
//! filecoin-proofs' own struct (untagged, no registered proof: the size comes from the caller),
//! and lotus-bench's wrapper `{"Phase1Out": base64, "SectorNum": n, "SectorSize": bytes}`
//! around the first. Every field is checked before any long work starts.

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use provetop_engine::circuit::shape::hex;
use serde_json::{Map, Value};
use std::path::Path;

use crate::sector::{ProofVersion, SectorSize};

/// The parts of a C1 output the prover needs, with the sector size and proof version known.
#[derive(Clone, Debug)]
pub struct C1 {
    /// The sector's size, from the file's registered proof or wrapper, else the caller's.
    pub size: SectorSize,
    /// The seal proof's version, from the file's registered proof, else the caller's, else V1_1.
    pub version: ProofVersion,
    /// filecoin-proofs' `SealCommitPhase1Output` as JSON, for that size's tree type.
    pub output: Value,
    /// From lotus-bench's wrapper, where it has one.
    pub sector_id: Option<u64>,
    /// Ours: a C1 written by `seal` carries its prover id.
    pub prover_id: Option<[u8; 32]>,
    /// The sealed sector's replica commitment (never all zero).
    pub comm_r: [u8; 32],
    /// The sector's data commitment (never all zero).
    pub comm_d: [u8; 32],
    /// The pre-commit's ticket, the randomness the replica was sealed with.
    pub ticket: [u8; 32],
    /// The interactive seed that picked the challenges of commit phase 1.
    pub seed: [u8; 32],
}

/// The largest C1 file read: a 64 GiB sector's is about 60 MB of JSON.
const MAX_BYTES: u64 = 1 << 30;

impl C1 {
    /// Reads `path`; `size` and `version`, where given, must agree with the file.
    pub fn read(
        path: &Path,
        size: Option<SectorSize>,
        version: Option<ProofVersion>,
    ) -> Result<C1> {
        let text = provetop_telemetry::input::read_regular(path, MAX_BYTES)
            .with_context(|| format!("--c1 {}", path.display()))?;
        C1::parse(&text, size, version).with_context(|| format!("--c1 {}", path.display()))
    }

    /// Parses a C1 output's JSON in any of the three layouts; `size` and `version`, where given,
    /// must agree with it.
    pub fn parse(
        text: &[u8],
        size: Option<SectorSize>,
        version: Option<ProofVersion>,
    ) -> Result<C1> {
        let v: Value = serde_json::from_slice(text).map_err(|e| anyhow!("not JSON: {e}"))?;
        let Value::Object(mut top) = v else {
            bail!("not a C1 output: the JSON is not an object");
        };
        let (mut sector_id, mut prover_id, mut wrapped_size) = (None, None, None);
        // lotus-bench's wrapper.
        if let Some(inner) = top.remove("Phase1Out") {
            let b64 = inner
                .as_str()
                .ok_or_else(|| anyhow!("Phase1Out is not a base64 string"))?;
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| anyhow!("Phase1Out is not base64: {e}"))?;
            sector_id = top.get("SectorNum").and_then(Value::as_u64);
            wrapped_size = match top.get("SectorSize") {
                Some(s) => Some(SectorSize::from_bytes(
                    s.as_u64()
                        .ok_or_else(|| anyhow!("SectorSize is not a number"))?,
                )?),
                None => None,
            };
            if let Some(p) = top.get("ProverId").and_then(Value::as_str) {
                prover_id = Some(parse_prover_id(p)?);
            }
            top = match serde_json::from_slice(&raw) {
                Ok(Value::Object(m)) => m,
                _ => bail!("Phase1Out does not hold a JSON object"),
            };
        }
        let tagged = match top.remove("registered_proof") {
            Some(Value::String(name)) => Some(ProofVersion::parse_registered(&name)?),
            Some(_) => bail!("registered_proof is not a string"),
            None => None,
        };
        let (size, version) = resolve(tagged, wrapped_size, size, version)?;
        let proofs = match top.remove("vanilla_proofs") {
            // The api's enum: {"StackedDrg2KiBV1": [[...]]}; its tag names the tree's size.
            Some(Value::Object(tag)) if tag.len() == 1 => {
                let (name, proofs) = tag.into_iter().next().expect("the guard saw one entry");
                let want = format!("StackedDrg{}V1", size.name());
                if name != want {
                    bail!("its vanilla proofs are `{name}`, not the {want} of a {size} sector");
                }
                proofs
            }
            Some(p @ Value::Array(_)) => p,
            Some(_) => bail!("vanilla_proofs has an unknown layout"),
            None => bail!("not a C1 output: no vanilla_proofs"),
        };
        match &proofs {
            Value::Array(parts) if !parts.is_empty() => {}
            _ => bail!("the C1 output holds no vanilla proofs"),
        }
        let comm_r = bytes32(&top, "comm_r")?;
        let comm_d = bytes32(&top, "comm_d")?;
        let ticket = bytes32(&top, "ticket")?;
        let seed = bytes32(&top, "seed")?;
        if comm_r == [0; 32] || comm_d == [0; 32] {
            bail!("comm_r or comm_d is all zero");
        }
        let replica_id = top
            .remove("replica_id")
            .ok_or_else(|| anyhow!("not a C1 output: no replica_id"))?;
        let mut output = Map::new();
        output.insert("vanilla_proofs".into(), proofs);
        for (k, v) in [
            ("comm_r", comm_r),
            ("comm_d", comm_d),
            ("seed", seed),
            ("ticket", ticket),
        ] {
            output.insert(k.into(), Value::from(v.to_vec()));
        }
        output.insert("replica_id".into(), replica_id);
        Ok(C1 {
            size,
            version,
            output: Value::Object(output),
            sector_id,
            prover_id,
            comm_r,
            comm_d,
            ticket,
            seed,
        })
    }

    /// The file's partitions (each a list of challenge proofs).
    pub fn partitions(&self) -> usize {
        self.output["vanilla_proofs"].as_array().map_or(0, Vec::len)
    }

    /// Lotus-bench's layout around filecoin-proofs-api's JSON, with our prover id added.
    pub fn to_wrapped_json(&self, sector_id: u64, prover_id: &[u8; 32]) -> Value {
        let mut inner = self.output.as_object().cloned().unwrap_or_default();
        inner.insert(
            "registered_proof".into(),
            Value::from(self.version.registered_name(self.size)),
        );
        let proofs = inner.remove("vanilla_proofs").unwrap_or(Value::Null);
        let mut tag = Map::new();
        tag.insert(format!("StackedDrg{}V1", self.size.name()), proofs);
        inner.insert("vanilla_proofs".into(), Value::Object(tag));
        let raw = serde_json::to_vec(&Value::Object(inner)).unwrap_or_default();
        serde_json::json!({
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(raw),
            "SectorNum": sector_id,
            "SectorSize": self.size.bytes(),
            "ProverId": hex(prover_id),
        })
    }
}

/// The size and version from the file, its wrapper and the command line, which must agree.
fn resolve(
    tagged: Option<(SectorSize, ProofVersion)>,
    wrapped: Option<SectorSize>,
    size: Option<SectorSize>,
    version: Option<ProofVersion>,
) -> Result<(SectorSize, ProofVersion)> {
    let from_file = tagged.map(|t| t.0).or(wrapped);
    if let (Some((t, _)), Some(w)) = (tagged, wrapped) {
        if t != w {
            bail!("the wrapper says {w} but the proof inside is for {t} sectors");
        }
    }
    let size = match (from_file, size) {
        (Some(f), Some(s)) if f != s => {
            bail!("the file is for {f} sectors, not the {s} asked for with --sector-size")
        }
        (Some(f), _) => f,
        (None, Some(s)) => s,
        (None, None) => bail!("the file does not say its sector size: give --sector-size"),
    };
    let version = match (tagged.map(|t| t.1), version) {
        (Some(f), Some(v)) if f != v => bail!("the file is a {f:?} proof, not {v:?}"),
        (Some(f), _) => f,
        (None, Some(v)) => v,
        (None, None) => ProofVersion::V1_1,
    };
    Ok((size, version))
}

fn bytes32(m: &Map<String, Value>, key: &str) -> Result<[u8; 32]> {
    let v = m
        .get(key)
        .ok_or_else(|| anyhow!("not a C1 output: no {key}"))?;
    let bytes: Vec<u8> =
        serde_json::from_value(v.clone()).map_err(|_| anyhow!("{key} is not a list of bytes"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| anyhow!("{key} has {} bytes, not 32", b.len()))
}

/// A prover id: 64 hex digits, or a miner's ID address (`f01000`, `t01000`), which Filecoin
/// turns into its payload (the LEB128 of the number) padded with zeros.
pub fn parse_prover_id(s: &str) -> Result<[u8; 32]> {
    let s = s.trim();
    let mut out = [0u8; 32];
    if let Some(num) = s.strip_prefix("f0").or_else(|| s.strip_prefix("t0")) {
        let mut n: u64 = num
            .parse()
            .map_err(|_| anyhow!("prover id `{s}`: not an ID address like f01000"))?;
        let mut i = 0;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out[i] = if n == 0 { byte } else { byte | 0x80 };
            i += 1;
            if n == 0 {
                return Ok(out);
            }
        }
    }
    if s.len() != 64 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        bail!("prover id `{s}`: expected 64 hex digits or an ID address like f01000");
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
            .expect("checked above: 64 ASCII hex digits");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_ids() {
        let a = parse_prover_id("f01000").unwrap();
        assert_eq!(&a[..3], &[0xe8, 0x07, 0]);
        assert_eq!(parse_prover_id(&hex(&a)).unwrap(), a);
        assert!(parse_prover_id("f1abc").is_err());
        assert!(parse_prover_id("zz").is_err());
    }

    /// The three layouts of one C1 output read to the same thing.
    #[test]
    fn layouts_agree() {
        let b = |x: u8| Value::from(vec![x; 32]);
        let proofs = serde_json::json!([[{"comm_d_proofs": [1, 2]}, {"comm_d_proofs": [3]}]]);
        let mut plain = Map::new();
        plain.insert("vanilla_proofs".into(), proofs);
        for (k, x) in [
            ("comm_r", 1),
            ("comm_d", 2),
            ("seed", 3),
            ("ticket", 4),
            ("replica_id", 5),
        ] {
            plain.insert(k.into(), b(x));
        }
        let plain_json = serde_json::to_vec(&Value::Object(plain)).unwrap();
        let a = C1::parse(&plain_json, Some(SectorSize::S8MiB), None).unwrap();
        assert_eq!((a.size, a.version), (SectorSize::S8MiB, ProofVersion::V1_1));
        assert_eq!(a.partitions(), 1);
        let wrapped = a.to_wrapped_json(7, &[9; 32]);
        let w = C1::parse(&serde_json::to_vec(&wrapped).unwrap(), None, None).unwrap();
        assert_eq!(w.output, a.output);
        assert_eq!(
            (w.size, w.sector_id, w.prover_id),
            (a.size, Some(7), Some([9; 32]))
        );
        let api = base64::engine::general_purpose::STANDARD
            .decode(wrapped["Phase1Out"].as_str().unwrap())
            .unwrap();
        let api_json: Value = serde_json::from_slice(&api).unwrap();
        assert_eq!(api_json["registered_proof"], "StackedDrg8MiBV1_1");
        assert!(api_json["vanilla_proofs"]["StackedDrg8MiBV1"].is_array());
        let r = C1::parse(&api, None, None).unwrap();
        assert_eq!(r.output, a.output);
        assert_eq!((r.comm_r, r.seed), ([1; 32], [3; 32]));
    }

    #[test]
    fn bad_files_are_named() {
        let err = |t: &str| format!("{:#}", C1::parse(t.as_bytes(), None, None).unwrap_err());
        assert!(err("[1]").contains("not an object"));
        assert!(err("{\"Phase1Out\": 3}").contains("base64"));
        assert!(err("{\"registered_proof\": \"StackedDrg2KiBV1_1\"}").contains("no vanilla_proofs"));
        assert!(err("{\"vanilla_proofs\": [[]]}").contains("--sector-size"));
        let wrong = "{\"registered_proof\": \"StackedDrg2KiBV1_1\", \"vanilla_proofs\": {\"StackedDrg8MiBV1\": [[1]]}}";
        assert!(err(wrong).contains("not the StackedDrg2KiBV1"));
        let e = C1::parse(
            b"{\"registered_proof\": \"StackedDrg2KiBV1_1\"}",
            Some(SectorSize::S32GiB),
            None,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("for 2KiB sectors, not the 32GiB"));
    }
}
