//! The pre-compiled path on the real circuit: a 2KiB PoRep partition (2.69 M constraints) from
//! its recorded matrices and its witness (challenges in parallel, labels' SHA-256 native) gives
//! the plain path's assignment, value for value. The test sector is sealed once and cached, as
//! for the other PoRep tests.

use provetop_engine::circuit::{Assignment, Workload};
use provetop_porep::{prepare, PorepArgs, SectorSize};

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
fn porep_2kib_precompiled_assignment_equals_the_plain_one() {
    let args = PorepArgs {
        sector_size: Some(SectorSize::S2KiB),
        ..PorepArgs::default()
    };
    let porep = prepare(&args, &|_| {}).unwrap();
    let w = Workload::External {
        circuit: porep.name,
    };
    let shape = w.shape().unwrap();
    let pc = w.record(&shape, &|_, _, _| {}).unwrap();
    assert!(pc.rows() > 2_000_000, "{} rows", pc.rows());
    let plain = w.synthesize(0, 0).unwrap();
    let got = pc.evaluate(w.witness(0, 0).unwrap()).unwrap();
    assert_eq!(first_difference(&got, &plain), None);
    assert_eq!(got.rows, plain.rows);
}
