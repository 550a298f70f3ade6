//! What each fuzz target does with its bytes, and each target's seed corpus from a fixed seed:
//! shared by the cargo-fuzz targets (nightly) and by `tests/fuzz_seeds.rs`, which feeds every
//! seed through the same functions on stable in CI. Every parser of outside input is here: a
//! recording, a parameters file, a C1 output and its vanilla proofs, and the config file.
//! Each must end in a value or an error, never a panic, a hang or an unbounded allocation.
#![allow(dead_code)]

use provetop_telemetry::record::{hostile, Recording};
use std::io::Cursor;

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

/// A target's function.
pub type Target = fn(&[u8]);

/// The targets by name, with their functions.
pub const TARGETS: &[(&str, Target)] = &[
    ("recording", recording),
    ("params", params),
    ("c1", c1),
    ("config", config),
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
        _ => vec![],
    }
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
