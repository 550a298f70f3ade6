//! A `SubmitProofRequest` in proto3's JSON mapping (lowerCamelCase names, 64-bit integers as
//! strings, bytes in base64, enums by name), as `gen-vanilla` writes it and `verify` and
//! `bench --request` read it. Reading takes what proto3 JSON parsers take: original field names
//! too, integers as numbers or strings, enums by name or number.

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use provetop_proto::cuzk::v1::{Priority, ProofKind, SubmitProofRequest};
use serde_json::{json, Map, Value};
use std::path::Path;

/// The largest request file read (a 64 GiB sector's C1 output in base64, and the rest).
const MAX_FILE: u64 = 256 << 20;

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The request as proto3 JSON; fields at their default are left out, as the mapping does.
pub fn to_json(r: &SubmitProofRequest) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.into(), v);
    };
    if !r.request_id.is_empty() {
        put("requestId", json!(r.request_id));
    }
    let kind = ProofKind::try_from(r.proof_kind).map(|k| json!(k.as_str_name()));
    put("proofKind", kind.unwrap_or(json!(r.proof_kind)));
    let u64s = [
        ("sectorSize", r.sector_size),
        ("registeredProof", r.registered_proof),
        ("sectorNumber", r.sector_number),
        ("minerId", r.miner_id),
    ];
    for (k, v) in u64s {
        if v != 0 {
            put(k, json!(v.to_string()));
        }
    }
    let prio = Priority::try_from(r.priority).map(|p| json!(p.as_str_name()));
    put("priority", prio.unwrap_or(json!(r.priority)));
    let bytes = [
        ("vanillaProof", &r.vanilla_proof),
        ("randomness", &r.randomness),
        ("commROld", &r.comm_r_old),
        ("commRNew", &r.comm_r_new),
        ("commDNew", &r.comm_d_new),
    ];
    for (k, v) in bytes {
        if !v.is_empty() {
            put(k, json!(b64(v)));
        }
    }
    if !r.vanilla_proofs.is_empty() {
        put(
            "vanillaProofs",
            Value::from(r.vanilla_proofs.iter().map(|v| b64(v)).collect::<Vec<_>>()),
        );
    }
    if r.partition_index != 0 {
        put("partitionIndex", json!(r.partition_index));
    }
    Value::Object(m)
}

/// Reads a request file.
pub fn read(path: &Path) -> Result<SubmitProofRequest> {
    let text = provetop_telemetry::input::read_regular(path, MAX_FILE)
        .with_context(|| format!("--request {}", path.display()))?;
    from_json(&text).with_context(|| format!("--request {}", path.display()))
}

/// Parses a request from its proto3 JSON.
pub fn from_json(text: &[u8]) -> Result<SubmitProofRequest> {
    let v: Value = serde_json::from_slice(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let Value::Object(m) = v else {
        bail!("not a SubmitProofRequest: the JSON is not an object");
    };
    let mut r = SubmitProofRequest::default();
    for (k, v) in &m {
        let bad = |what: &str| anyhow!("{k}: {what}");
        match k.as_str() {
            "requestId" | "request_id" => {
                r.request_id = v.as_str().ok_or_else(|| bad("not a string"))?.into()
            }
            "proofKind" | "proof_kind" => {
                r.proof_kind = enum_of(v, |s| ProofKind::from_str_name(s).map(|k| k as i32))
                    .ok_or_else(|| bad("not a ProofKind"))?
            }
            "priority" => {
                r.priority = enum_of(v, |s| Priority::from_str_name(s).map(|p| p as i32))
                    .ok_or_else(|| bad("not a Priority"))?
            }
            "sectorSize" | "sector_size" => {
                r.sector_size = u64_of(v).ok_or_else(|| bad("not a uint64"))?
            }
            "registeredProof" | "registered_proof" => {
                r.registered_proof = u64_of(v).ok_or_else(|| bad("not a uint64"))?
            }
            "sectorNumber" | "sector_number" => {
                r.sector_number = u64_of(v).ok_or_else(|| bad("not a uint64"))?
            }
            "minerId" | "miner_id" => r.miner_id = u64_of(v).ok_or_else(|| bad("not a uint64"))?,
            "partitionIndex" | "partition_index" => {
                r.partition_index = u64_of(v)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad("not a uint32"))?
            }
            "vanillaProof" | "vanilla_proof" => {
                r.vanilla_proof = bytes_of(v).map_err(|e| bad(&e))?
            }
            "randomness" => r.randomness = bytes_of(v).map_err(|e| bad(&e))?,
            "commROld" | "comm_r_old" => r.comm_r_old = bytes_of(v).map_err(|e| bad(&e))?,
            "commRNew" | "comm_r_new" => r.comm_r_new = bytes_of(v).map_err(|e| bad(&e))?,
            "commDNew" | "comm_d_new" => r.comm_d_new = bytes_of(v).map_err(|e| bad(&e))?,
            "vanillaProofs" | "vanilla_proofs" => {
                let list = v.as_array().ok_or_else(|| bad("not a list"))?;
                r.vanilla_proofs = list
                    .iter()
                    .map(bytes_of)
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(&e))?;
            }
            other => bail!("`{other}` is not a field of SubmitProofRequest"),
        }
    }
    Ok(r)
}

fn u64_of(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn enum_of(v: &Value, by_name: impl Fn(&str) -> Option<i32>) -> Option<i32> {
    match v {
        Value::String(s) => by_name(s),
        Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
        _ => None,
    }
}

fn bytes_of(v: &Value) -> Result<Vec<u8>, String> {
    let s = v.as_str().ok_or("not a base64 string")?;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| format!("not base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_the_mapping_s_spellings() {
        let r = SubmitProofRequest {
            request_id: "porep-1000-7".into(),
            proof_kind: ProofKind::PorepSealCommit as i32,
            sector_size: 2048,
            registered_proof: 5,
            priority: Priority::Normal as i32,
            vanilla_proof: b"{\"x\":1}".to_vec(),
            sector_number: 7,
            miner_id: 1000,
            ..Default::default()
        };
        let j = to_json(&r);
        assert_eq!(j["proofKind"], "POREP_SEAL_COMMIT");
        assert_eq!(j["sectorSize"], "2048");
        assert_eq!(from_json(&serde_json::to_vec(&j).unwrap()).unwrap(), r);
        let alt =
            br#"{"request_id": "a", "proof_kind": 1, "sector_size": 2048, "priority": "HIGH"}"#;
        let a = from_json(alt).unwrap();
        assert_eq!((a.proof_kind, a.sector_size, a.priority), (1, 2048, 3));
        for bad in [
            &br#"{"proofKind": "NOPE"}"#[..],
            br#"{"sectorSize": -1}"#,
            br#"{"vanillaProof": "***"}"#,
            br#"{"extra": 1}"#,
            b"[1]",
            b"{",
        ] {
            assert!(from_json(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
