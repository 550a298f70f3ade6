//! The pre-compiled path on the real circuit: a 2KiB PoRep partition (2.69 M constraints) from
//! its recorded matrices and its witness (challenges in parallel, labels' SHA-256 native) gives
//! the plain path's assignment, value for value, and with the same r and s the same proof
//! bytes, which filecoin-proofs' `verify_seal` accepts. The test sector, its parameters and its
//! recorded circuit live in the cache the binary's PoRep test uses too (target/tmp), so CI
//! seals and sets up once.

use blstrs::Scalar;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::circuit::Assignment;
use provetop_engine::prover;
use provetop_engine::store::ParamsStore;
use provetop_porep::{filecoin, prepare, PorepArgs, SectorSize};
/// The first place two assignments differ, named.
fn first_difference(got: &Assignment, want: &Assignment) -> Option<String> {
    let vectors = [
        ("input", &got.input, &want.input),
        ("aux", &got.aux, &want.aux),
        ("a", &got.a, &want.a),
        ("b", &got.b, &want.b),
        ("c", &got.c, &want.c),
    ];
    for (name, g, w) in vectors {
        if g.len() != w.len() {
            return Some(format!(
                "{name}: {} values, the plain path {}",
                g.len(),
                w.len()
            ));
        }
        if let Some(i) = (0..g.len()).find(|&i| g[i] != w[i]) {
            return Some(format!("{name}[{i}] differs (of {})", g.len()));
        }
    }
    let densities = [
        ("A's aux", &got.a_aux_density, &want.a_aux_density),
        ("B's inputs", &got.b_input_density, &want.b_input_density),
        ("B's aux", &got.b_aux_density, &want.b_aux_density),
    ];
    densities
        .into_iter()
        .find(|(_, g, w)| g != w)
        .map(|(name, _, _)| format!("the density of {name} differs"))
}

#[test]
fn porep_2kib_precompiled_equals_the_plain_path_and_verify_seal_accepts_both() {
    // The cache shared with tests/porep.rs; the only test of this binary, so nothing else
    // reads the environment while it is set.
    std::env::set_var(
        "XDG_CACHE_HOME",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("porep-2kib-cache"),
    );
    let args = PorepArgs {
        sector_size: Some(SectorSize::S2KiB),
        ..PorepArgs::default()
    };
    let porep = prepare(&args, &|_| {}).unwrap();
    let w = porep.circuits.workload();
    let store = ParamsStore::new(None, None);
    let (pc, _) = store.circuit(&w, &|_, _, _| {}).unwrap();
    assert!(pc.rows() > 2_000_000, "{} rows", pc.rows());
    let plain = w.synthesize(0, 0).unwrap();
    let got = pc.evaluate(w.witness(0, 0).unwrap()).unwrap();
    assert_eq!(first_difference(&got, &plain), None);
    assert_eq!(got.rows, plain.rows);

    // The same r and s give the same proof; filecoin-proofs accepts it.
    let loaded = store.get(&w, &|_, _, _| {}).unwrap();
    let cpu = CpuExecutor::new(0, 2).unwrap();
    let (r, s) = (Scalar::from(0x5eed_u64), Scalar::from(0xc0ffee_u64));
    let inputs = plain.public_inputs().to_vec();
    let proofs = [plain, got].map(|asg| {
        prover::prove_staged(&cpu, asg, &loaded.params, (r, s), false)
            .unwrap()
            .to_bytes()
    });
    assert_eq!(proofs[0], proofs[1], "pre-compiled and plain proofs differ");
    let proof = prover::Proof::from_bytes(&proofs[1]).unwrap();
    assert!(prover::verify(&loaded.pvk, &proof, &inputs).is_ok());
    assert_eq!(
        porep.verify(&loaded.params.vk, &proofs[1]).unwrap(),
        Some(true),
        "verify_seal refused the proof"
    );
    filecoin::cleanup(&porep.circuits);
}
