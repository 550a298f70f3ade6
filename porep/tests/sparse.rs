//! Sparse sectors against storage-proofs' own verifier: a 2KiB one whose comm_d is
//! filecoin-proofs' of all-zero data, a 32 GiB one with Filecoin's 10 partitions of 18
//! challenges, and a tampered one (one label changed) refused in seconds, naming the check.

use provetop_porep::sparse::{self, Spec};
use provetop_porep::{source, SectorSize};
use std::time::Instant;

fn spec(size: SectorSize) -> Spec {
    Spec {
        size,
        prover_id: provetop_porep::c1::parse_prover_id("f01000").expect("an ID address"),
        sector_id: 7,
        seed: 3,
        tamper_label: None,
    }
}

#[test]
fn sparse_porep_requests_pass_the_vanilla_verifier_and_tampered_ones_do_not() {
    provetop_porep::filecoin::configure(None).unwrap();
    // 2KiB: the all-zero data's comm_d is filecoin-proofs' own.
    let small = sparse::porep(&spec(SectorSize::S2KiB)).unwrap();
    let zero = filecoin_proofs::compute_comm_d(filecoin_proofs::SectorSize(2048), &[]).unwrap();
    assert_eq!(small.comm_d, zero);
    assert_eq!(small.partitions(), 1);

    // 32 GiB: Filecoin's 10 partitions of 18 challenges, checked by verify_all_partitions
    // (`sparse::porep` runs it) and again here, as a request is before it is proved.
    let start = Instant::now();
    let big = sparse::porep(&spec(SectorSize::S32GiB)).unwrap();
    let built = start.elapsed().as_secs_f64();
    let parts = big.output["vanilla_proofs"].as_array().unwrap();
    assert_eq!(parts.len(), 10);
    assert!(parts.iter().all(|p| p.as_array().unwrap().len() == 18));
    // Another seed gives another sector over the same (all-zero) data.
    let other = sparse::porep(&Spec {
        seed: 4,
        ..spec(SectorSize::S2KiB)
    })
    .unwrap();
    assert_ne!(other.comm_r, small.comm_r);
    assert_eq!(other.comm_d, small.comm_d);
    assert_ne!(big.comm_d, small.comm_d);

    // One label changed (partition 3, challenge 5, layer 2) and the trees built over it: the
    // openings all agree, and only the label check names what is wrong.
    let tampered = sparse::porep_unchecked(&Spec {
        tamper_label: Some((3, 5, 2)),
        ..spec(SectorSize::S32GiB)
    })
    .unwrap();
    let start = Instant::now();
    let err = format!("{:#}", source::check(&tampered).unwrap_err());
    let refused = start.elapsed().as_secs_f64();
    assert!(err.contains("vanilla proofs do not verify"), "{err}");
    assert!(
        err.contains("partition 3, challenge 5") && err.contains("label check fails at layer 2"),
        "{err}"
    );
    assert!(refused < 30.0, "refused after {refused:.1} s");
    eprintln!(
        "32GiB sparse PoRep: built and checked in {built:.1} s; tampered refused in {refused:.1} s"
    );
    // Synthetic and non-interactive PoRep are refused with the reason.
    assert!(format!("{:#}", sparse::registered(13).unwrap_err()).contains("comm_r"));
    assert_eq!(sparse::registered(8).unwrap(), SectorSize::S32GiB);
}
