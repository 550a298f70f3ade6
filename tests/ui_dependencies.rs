//! The dashboard builds on the contract crate alone: no prover, curve or GPU library in its
//! dependency tree (they made a UI change rebuild the whole engine).

use std::process::Command;

#[test]
fn the_ui_depends_on_the_telemetry_contract_and_not_on_the_engine() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "provetop-ui",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .arg("--offline")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"provetop-telemetry"), "{tree}");
    for banned in [
        "provetop-engine",
        "blstrs",
        "blst",
        "cudarc",
        "nvml-wrapper",
    ] {
        assert!(
            !crates.contains(&banned),
            "{banned} in the UI's tree:\n{tree}"
        );
    }
}
