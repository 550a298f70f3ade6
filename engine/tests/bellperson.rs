//! Cross-checks against bellperson 0.27, the prover Filecoin uses: each side reads the other's
//! files and verifies the other's proofs for the same circuit and parameters.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::Field;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::circuit::Workload;
use provetop_engine::params::{io, setup};
use provetop_engine::prover::{self, PreparedVerifyingKey, Proof};
use rand::SeedableRng;

fn synthetic() -> Workload {
    Workload::Synthetic {
        log2_constraints: 10,
    }
}

fn our_params(w: &Workload) -> provetop_engine::params::Parameters {
    let shape = w.shape().unwrap();
    setup::generate(
        w.circuit(0).unwrap(),
        &shape,
        &mut rand::rngs::OsRng,
        &|_, _, _| {},
    )
    .unwrap()
}

fn to_bytes(p: &provetop_engine::params::Parameters) -> Vec<u8> {
    let mut out = vec![];
    io::write_params(p, &mut out).unwrap();
    out
}

#[test]
fn bellperson_reads_our_params_and_verifies_our_proofs() {
    for w in [synthetic(), Workload::Sha256 { blocks: 1 }] {
        let ours = our_params(&w);
        let bytes = to_bytes(&ours);
        let theirs =
            bp::Parameters::<Bls12>::read(&bytes[..], true).expect("bellperson reads our params");
        let mut their_vk = vec![];
        theirs.vk.write(&mut their_vk).unwrap();
        let mut our_vk = vec![];
        io::write_vk(&ours.vk, &mut our_vk).unwrap();
        assert_eq!(their_vk, our_vk, "the verifying keys are equal");

        let exec = CpuExecutor::new(0, 2).unwrap();
        let asg = w.synthesize(3, 0).unwrap();
        let inputs = asg.public_inputs().to_vec();
        let proof = prover::prove_with(
            &exec,
            asg,
            &ours,
            Scalar::random(rand::rngs::OsRng),
            Scalar::random(rand::rngs::OsRng),
        )
        .unwrap();
        let their_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
        let pvk = bp::prepare_verifying_key(&theirs.vk);
        assert!(
            bp::verify_proof(&pvk, &their_proof, &inputs).unwrap(),
            "bellperson accepts our proof of {}",
            w.label()
        );
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(!bp::verify_proof(&pvk, &their_proof, &wrong).unwrap());
    }
}

#[test]
fn we_verify_bellperson_proofs_and_read_bellperson_params() {
    let w = synthetic();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    // Parameters made by bellperson, written by bellperson, read by us.
    let theirs =
        bp::generate_random_parameters::<Bls12, _, _>(w.circuit(0).unwrap(), &mut rng).unwrap();
    let mut bytes = vec![];
    theirs.write(&mut bytes).unwrap();
    let ours = io::read_params(&bytes[..], Some(bytes.len() as u64)).unwrap();
    let pvk = PreparedVerifyingKey::new(&ours.vk);

    // bellperson's proof, verified by us.
    let asg = w.synthesize(4, 0).unwrap();
    let inputs = asg.public_inputs().to_vec();
    let their_proof = bp::create_random_proof(w.circuit(4).unwrap(), &theirs, &mut rng).unwrap();
    let mut proof_bytes = vec![];
    their_proof.write(&mut proof_bytes).unwrap();
    let proof = Proof::from_bytes(&proof_bytes).unwrap();
    assert_eq!(prover::verify(&pvk, &proof, &inputs), Ok(()));

    // Our proof with bellperson's params, verified by both.
    let exec = CpuExecutor::new(0, 2).unwrap();
    let mine =
        prover::prove_with(&exec, asg, &ours, Scalar::from(3u64), Scalar::from(5u64)).unwrap();
    assert_eq!(prover::verify(&pvk, &mine, &inputs), Ok(()));
    let bp_pvk = bp::prepare_verifying_key(&theirs.vk);
    let bp_mine = bp::Proof::<Bls12>::read(&mine.to_bytes()[..]).unwrap();
    assert!(bp::verify_proof(&bp_pvk, &bp_mine, &inputs).unwrap());

    // With the same r and s, bellperson's proof and ours are the same bytes.
    let (r, s) = (Scalar::from(3u64), Scalar::from(5u64));
    let same = bp::create_proof(w.circuit(4).unwrap(), &theirs, r, s).unwrap();
    let mut same_bytes = vec![];
    same.write(&mut same_bytes).unwrap();
    assert_eq!(same_bytes, mine.to_bytes().to_vec());
}

#[test]
fn truncated_and_foreign_params_are_refused_clearly() {
    let ours = our_params(&Workload::Synthetic {
        log2_constraints: 5,
    });
    let bytes = to_bytes(&ours);
    for cut in [0, 50, 96 * 3, bytes.len() / 2, bytes.len() - 1] {
        let err = io::read_params(&bytes[..cut], Some(cut as u64))
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
        // Without a known length the reader still stops at the end of the data.
        let err = io::read_params(&bytes[..cut], None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated"), "cut at {cut} (streamed): {err}");
    }
    let junk: Vec<u8> = (0..bytes.len()).map(|i| (i * 7919 % 251) as u8).collect();
    let err = io::read_params(&junk[..], Some(junk.len() as u64))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a bellperson parameter file"), "{err}");
    let mut extra = bytes.clone();
    extra.extend_from_slice(b"trailing");
    let err = io::read_params(&extra[..], Some(extra.len() as u64))
        .unwrap_err()
        .to_string();
    assert!(err.contains("unexpected bytes"), "{err}");
    // A count larger than the file is refused before anything is allocated for it.
    let vk_len = 3 * 96 + 3 * 192 + 4 + ours.vk.ic.len() * 96;
    let mut huge = bytes[..vk_len].to_vec();
    huge.extend_from_slice(&u32::MAX.to_be_bytes());
    let err = io::read_params(&huge[..], Some(huge.len() as u64 + 1000))
        .unwrap_err()
        .to_string();
    assert!(err.contains("claims"), "{err}");
}

/// A file's query lengths come from its header alone, and a cut file says so.
#[test]
fn params_header_gives_the_query_lengths() {
    let ours = our_params(&Workload::Synthetic {
        log2_constraints: 6,
    });
    let bytes = to_bytes(&ours);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.params");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        io::peek_counts(&path).unwrap(),
        (ours.vk.ic.len(), ours.h.len(), ours.l.len())
    );
    // Cut inside the H query: the L length is past the end.
    let h_points = 3 * 96 + 3 * 192 + 4 + ours.vk.ic.len() * 96 + 4;
    std::fs::write(&path, &bytes[..h_points + 10 * 96]).unwrap();
    let err = format!("{:#}", io::peek_counts(&path).unwrap_err());
    assert!(err.contains("truncated"), "{err}");
}

/// A verifying key reads alone from a `.vk` file (bellperson's `VerifyingKey::write`) or from
/// the head of a parameter file; a `.vk` with bytes after the key is refused.
#[test]
fn the_verifying_key_reads_from_a_vk_or_a_params_file() {
    let ours = our_params(&Workload::Synthetic {
        log2_constraints: 6,
    });
    let dir = tempfile::tempdir().unwrap();
    let (vk_path, params_path) = (dir.path().join("a.vk"), dir.path().join("a.params"));
    let mut vk = vec![];
    io::write_vk(&ours.vk, &mut vk).unwrap();
    std::fs::write(&vk_path, &vk).unwrap();
    std::fs::write(&params_path, to_bytes(&ours)).unwrap();
    let mut again = vec![];
    io::write_vk(&io::load_vk(&vk_path, true).unwrap(), &mut again).unwrap();
    assert_eq!(again, vk);
    let mut from_params = vec![];
    io::write_vk(&io::load_vk(&params_path, false).unwrap(), &mut from_params).unwrap();
    assert_eq!(from_params, vk);
    let err = format!("{:#}", io::load_vk(&params_path, true).unwrap_err());
    assert!(
        err.contains("unexpected bytes after the verifying key"),
        "{err}"
    );
    std::fs::write(&vk_path, &vk[..vk.len() - 7]).unwrap();
    assert!(io::load_vk(&vk_path, true).is_err());
}
