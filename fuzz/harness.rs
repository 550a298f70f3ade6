//! What each fuzz target does with its bytes, and each target's seed corpus from a fixed seed:
//! shared by the cargo-fuzz targets (nightly) and by `tests/fuzz_seeds.rs`, which feeds every
//! seed through the same functions on stable in CI. Every parser of outside input is here: a
//! recording, a parameters file, a C1 output and its vanilla proofs, the config file, and a
//! proof request as `verify`/`bench --request` read it (proto3 JSON) and as serve decodes it
//! (protobuf). Each target's committed corpus (`fuzz/regressions/<target>/`, where there is
//! one; `fuzz/corpus/` is what the seeds binary and cargo-fuzz write, not kept) is replayed
//! too.
//! Each must end in a value or an error, never a panic, a hang or an unbounded allocation.
#![allow(dead_code)]

use prost::Message;
use provetop_proto::cuzk::v1::SubmitProofRequest;
use provetop_telemetry::record::{hostile, Recording};
use std::io::Cursor;

/// The request file's reader, as the binary has it.
#[path = "../src/request_file.rs"]
mod request_file;

/// Any bytes as a recording: opening, indexing, reading every frame, and seeking.
pub fn recording(data: &[u8]) {
    if let Ok(mut rec) = Recording::from_reader(Cursor::new(data)) {
        rec.set_max_memory(64 << 20);
        let mut n = 0u64;
        let report = rec.for_each(|_| n += 1);
        assert!(report.records == n);
        let _ = report.notes();
        // Frames also decode one by one, in any order (what seeking does).
        for i in (0..rec.frames().len()).rev().take(4) {
            let _ = rec.read_frame(i);
        }
    }
}

/// Any bytes as a bellperson parameters file (its header and every query).
pub fn params(data: &[u8]) {
    let _ = provetop_engine::params::io::read_params(data, Some(data.len() as u64));
}

/// Any bytes as a C1 output (Lotus's wrapper or the api's JSON), then its vanilla proofs in
/// Filecoin's own types.
pub fn c1(data: &[u8]) {
    if let Ok(c1) = provetop_porep::C1::parse(data, None, None) {
        let _ = c1.partitions();
        let _ = provetop_porep::source::parse_vanilla(&c1);
    }
}

/// Any bytes as the config file: TOML, then the `[engine]` and `[ui]` tables.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = toml::from_str::<toml::Table>(text) else {
        return;
    };
    for (name, v) in &doc {
        if let toml::Value::Table(t) = v {
            match name.as_str() {
                "engine" => {
                    let _ = provetop_telemetry::config::EngineConfig::from_toml_table(t);
                }
                _ => {
                    let _ = provetop_ui::UiSettings::from_table(t);
                }
            }
        }
    }
}

/// Any bytes as a request file's proto3 JSON; a request read writes back to the same request.
pub fn request_json(data: &[u8]) {
    if let Ok(r) = request_file::from_json(data) {
        round_trip(&r);
    }
}

/// Any bytes as a protobuf `SubmitProofRequest` (what serve's SubmitProof and Prove decode);
/// a request decoded encodes and writes as JSON back to the same request.
pub fn request_proto(data: &[u8]) {
    if let Ok(r) = SubmitProofRequest::decode(data) {
        assert_eq!(
            SubmitProofRequest::decode(&r.encode_to_vec()[..]).ok(),
            Some(r.clone())
        );
        round_trip(&r);
    }
}

/// Any bytes as a 2KiB WindowPoSt's and WinningPoSt's vanilla proof (bincode
/// `FallbackPoStSectorProof`): the decoder and shape checks serve runs on `vanilla_proofs`.
pub fn vanilla_post(data: &[u8]) {
    use provetop_porep::{Kind, SectorSize};
    for kind in [Kind::WindowPost, Kind::WinningPost] {
        let _ = provetop_porep::post::decode_vanilla(kind, SectorSize::S2KiB, &[data.to_vec()]);
    }
}

/// Any bytes as a 2KiB SnapDeals update's vanilla proof (bincode `PartitionProof`): the
/// decoder and shape checks serve runs on `vanilla_proofs`.
pub fn vanilla_snap(data: &[u8]) {
    let size = provetop_porep::SectorSize::S2KiB;
    let _ = provetop_porep::snap::decode_vanilla(size, &[data.to_vec()]);
}

/// Real vanilla proofs of the test sector (gen-vanilla's), cut at many points and with bits
/// flipped.
fn mutated(real: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out = vec![];
    for whole in real {
        for cut in (0..whole.len()).step_by(whole.len() / 8 + 1) {
            out.push(whole[..cut].to_vec());
        }
        for i in 0..6 {
            let mut b = whole.to_vec();
            b[(i * 7919 + 13) % whole.len()] ^= 1 << (i % 8);
            out.push(b);
        }
        out.push(whole.to_vec());
    }
    out
}

fn round_trip(r: &SubmitProofRequest) {
    let text = serde_json::to_vec(&request_file::to_json(r)).expect("JSON");
    let back = request_file::from_json(&text).expect("a request written reads back");
    assert_eq!(&back, r, "the JSON mapping loses nothing");
}

/// A target's function.
pub type Target = fn(&[u8]);

/// The targets by name, with their functions.
pub const TARGETS: &[(&str, Target)] = &[
    ("recording", recording),
    ("params", params),
    ("c1", c1),
    ("config", config),
    ("request_json", request_json),
    ("request_proto", request_proto),
    ("vanilla_post", vanilla_post),
    ("vanilla_snap", vanilla_snap),
];

/// The seed corpus of `target`, the same on every machine.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "recording" => hostile::corpus(0xf022, 240)
            .into_iter()
            .map(|c| c.bytes)
            .collect(),
        "params" => params_seeds(),
        "c1" => C1_SEEDS.iter().map(|s| s.as_bytes().to_vec()).collect(),
        "config" => CONFIG_SEEDS.iter().map(|s| s.as_bytes().to_vec()).collect(),
        "request_json" => {
            let mut out: Vec<Vec<u8>> = REQUEST_SEEDS
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect();
            out.extend(
                requests()
                    .iter()
                    .map(|r| serde_json::to_vec(&request_file::to_json(r)).expect("JSON")),
            );
            out
        }
        "request_proto" => request_proto_seeds(),
        "vanilla_post" => mutated(&[
            include_bytes!("regressions/vanilla_post/window-post-2kib.bin"),
            include_bytes!("regressions/vanilla_post/winning-post-2kib.bin"),
        ]),
        "vanilla_snap" => mutated(&[include_bytes!("regressions/vanilla_snap/snap-2kib.bin")]),
        _ => vec![],
    }
}

/// Requests of every kind, with fields at their edges.
fn requests() -> Vec<SubmitProofRequest> {
    let full = SubmitProofRequest {
        request_id: "porep-1000-7".into(),
        proof_kind: 1,
        sector_size: 2048,
        registered_proof: 5,
        priority: 3,
        vanilla_proof: b"{\"x\":1}".to_vec(),
        sector_number: 7,
        miner_id: 1000,
        vanilla_proofs: vec![vec![1, 2, 3], vec![], vec![0xff; 40]],
        partition_index: 3,
        randomness: vec![7; 32],
        comm_r_old: vec![1; 32],
        comm_r_new: vec![2; 32],
        comm_d_new: vec![3; 32],
    };
    vec![
        SubmitProofRequest::default(),
        full.clone(),
        SubmitProofRequest {
            proof_kind: -1,
            priority: i32::MAX,
            sector_size: u64::MAX,
            partition_index: u32::MAX,
            request_id: "\u{1b}[2J\u{0}é".into(),
            ..full.clone()
        },
        SubmitProofRequest {
            proof_kind: 4,
            vanilla_proofs: vec![vec![0; 1000]; 3],
            ..SubmitProofRequest::default()
        },
    ]
}

/// The requests' encodings, cut at many points and with bits flipped, and length fields that
/// claim far more than follows.
fn request_proto_seeds() -> Vec<Vec<u8>> {
    let mut out = vec![];
    for r in requests() {
        let whole = r.encode_to_vec();
        for cut in (0..whole.len()).step_by(whole.len() / 8 + 1) {
            out.push(whole[..cut].to_vec());
        }
        for i in 0..4 {
            let mut b = whole.clone();
            if !b.is_empty() {
                let at = (i * 7919 + 13) % b.len();
                b[at] ^= 1 << (i % 8);
            }
            out.push(b);
        }
        out.push(whole);
    }
    // Field 10 (vanilla_proof), length 2^63 as a varint, then nothing.
    out.push(vec![
        0x52, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
    ]);
    // Field 11 (vanilla_proofs) 65,536 times empty.
    out.push([0x5a, 0x00].repeat(1 << 16));
    out
}

/// The committed corpus files of `target` under `root` (`fuzz/regressions/<target>/`: inputs that
/// once found a fault or reach far into the decoder, kept so they stay fixed), in name order;
/// none when it has no folder.
pub fn corpus(root: &std::path::Path, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root.join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("reading a corpus file");
            (p.display().to_string(), bytes)
        })
        .collect()
}

/// A small real parameters file, cut at many points, with bits flipped and its counts
/// raised to the most a u32 says.
fn params_seeds() -> Vec<Vec<u8>> {
    use provetop_engine::circuit::Workload;
    use provetop_engine::params::{io, setup};
    use rand::SeedableRng;
    let w = Workload::Synthetic {
        log2_constraints: 4,
    };
    let shape = w.shape().expect("a shape");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let p = setup::generate(
        w.circuit(0).expect("a circuit"),
        &shape,
        &mut rng,
        &|_, _, _| {},
    )
    .expect("parameters");
    let mut whole = vec![];
    io::write_params(&p, &mut whole).expect("written");
    let mut out = vec![whole.clone()];
    for cut in (0..whole.len()).step_by(whole.len() / 24 + 1) {
        out.push(whole[..cut].to_vec());
    }
    let vk_len = 3 * 96 + 3 * 192 + 4 + p.vk.ic.len() * 96;
    for at in [vk_len - 4 - p.vk.ic.len() * 96, vk_len] {
        let mut b = whole.clone();
        b[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        out.push(b);
    }
    for i in 0..16 {
        let mut b = whole.clone();
        let at = (i * 7919 + 13) % b.len();
        b[at] ^= 1 << (i % 8);
        out.push(b);
    }
    out
}

const C1_SEEDS: &[&str] = &[
    "",
    "{}",
    "[]",
    "null",
    r#"{"Phase1Out": 3}"#,
    r#"{"Phase1Out": "not base64!"}"#,
    r#"{"Phase1Out": "e30=", "SectorSize": 2048}"#,
    r#"{"Phase1Out": "W10=", "SectorSize": 2048, "SectorNum": 1, "ProverId": "f01000"}"#,
    r#"{"Phase1Out": "e30=", "SectorSize": 12345}"#,
    r#"{"Phase1Out": "e30=", "ProverId": "zz"}"#,
    r#"{"registered_proof": 7}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1"}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": {"StackedDrg2KiBV1": []}}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": {"StackedDrg8MiBV1": [[]]}}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": [[{}]],
        "comm_r": [1], "comm_d": [], "ticket": [], "seed": [], "replica_id": 1}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": [[{"comm_r_last": 1}]],
        "comm_r": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],
        "comm_d": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],
        "ticket": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
        "seed": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
        "replica_id": "0x00"}"#,
    r#"{"registered_proof": "StackedDrg32GiBV1_1", "vanilla_proofs": [[[[[[[[[[[]]]]]]]]]]],
        "comm_r": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],
        "comm_d": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],
        "ticket": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
        "seed": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
        "replica_id": [1,2,3]}"#,
    r#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": [[1e999]], "comm_r": [-1]}"#,
];

const REQUEST_SEEDS: &[&str] = &[
    "",
    "{}",
    "[]",
    "null",
    "{",
    r#"{"proofKind": "POREP_SEAL_COMMIT", "sectorSize": "2048", "minerId": 1000}"#,
    r#"{"proof_kind": 1, "sector_size": 2048, "priority": "HIGH"}"#,
    r#"{"proofKind": "NOPE"}"#,
    r#"{"proofKind": 99999999999}"#,
    r#"{"sectorSize": -1}"#,
    r#"{"sectorSize": "18446744073709551616"}"#,
    r#"{"sectorSize": 1e300}"#,
    r#"{"partitionIndex": 4294967296}"#,
    r#"{"vanillaProof": "***"}"#,
    r#"{"vanillaProof": "e30="}"#,
    r#"{"vanillaProofs": ["AAEC", "", 3]}"#,
    r#"{"vanillaProofs": "AAEC"}"#,
    r#"{"requestId": 7}"#,
    r#"{"requestId": "a", "request_id": "b"}"#,
    r#"{"extra": 1}"#,
    r#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
];

const CONFIG_SEEDS: &[&str] = &[
    "",
    "[engine]\n",
    "[engine]\nlock = \"two-lock\"\ngpu_workers_per_device = 3\nvram_budget = \"64GiB\"\n",
    "[engine]\nlock = 3\n",
    "[engine]\ngpu_workers_per_device = 18446744073709551615\n",
    "[engine]\nhost_memory_budget = \"99999999999999999999TiB\"\n",
    "[engine]\nsynthesis_workers = \"auto\"\nprover_threads = -1\n",
    "[engine]\ndevices = [0, 1, 99999999999]\n",
    "[engine]\nunknown = 1\n",
    "[engine]\nb_g2_on = \"gpu\"\nprecompiled = \"maybe\"\n",
    "[ui]\ntheme = \"\\u001b[2J\"\nrefresh_hz = 0.0\n",
    "[ui]\nrefresh_hz = 1e308\nkeys = { quit = [\"Q\", \"ctrl-d\"] }\n",
    "[ui]\nkeys = { quit = 3, \"\" = [] }\n",
    "[engine]\n[engine.nested]\na = 1\n",
    "engine = 3\n",
    "a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
];
