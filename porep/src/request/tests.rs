//! The request's checks, each named in its message.

use super::*;

fn porep() -> Request<'static> {
    Request {
        request_id: "porep-1000-7",
        kind: Kind::Porep,
        registered_proof: 5,
        sector_size: 2048,
        vanilla_proof: b"{}",
        vanilla_proofs: &[],
        sector_number: 7,
        miner_id: 1000,
        randomness: &[],
        partition_index: 0,
        comm_r_old: &[],
        comm_r_new: &[],
        comm_d_new: &[],
    }
}

fn c1_err(r: &Request) -> String {
    let e = r.check().and_then(|c| r.c1(c).map(|_| ()));
    format!("{:#}", e.unwrap_err())
}

#[test]
fn bad_fields_are_named() {
    assert!(porep().check().is_ok());
    // cuzk's rule: the registered proof's size, whatever sector_size says (with a note).
    let r = Request {
        sector_size: 32 << 30,
        ..porep()
    };
    assert_eq!(r.check().unwrap().size, SectorSize::S2KiB);
    assert!(size_note(&r, SectorSize::S2KiB)
        .is_some_and(|n| n.contains("34359738368") && n.contains("2KiB")));
    assert!(size_note(&porep(), SectorSize::S2KiB).is_none());
    let r = Request {
        registered_proof: 12,
        ..porep()
    };
    assert!(c1_err(&r).contains("not supported"));
    let long = "x".repeat(MAX_REQUEST_ID + 1);
    let r = Request {
        request_id: &long,
        ..porep()
    };
    assert!(c1_err(&r).contains("request_id"));
    let r = Request {
        vanilla_proof: b"",
        ..porep()
    };
    assert!(c1_err(&r).contains("empty"));
    let r = Request {
        vanilla_proof: b"{\"Phase1Out\": 3",
        ..porep()
    };
    assert!(c1_err(&r).contains("not JSON"));
}

#[test]
fn other_kinds_fields_are_checked_before_parsing() {
    let one = [vec![1u8, 2, 3]];
    let post = |kind: Kind, registered_proof: u64| Request {
        kind,
        registered_proof,
        vanilla_proof: b"",
        vanilla_proofs: &one,
        randomness: &[0; 32],
        ..porep()
    };
    let fields = |r: &Request| format!("{:#}", r.check().unwrap_err());
    let checked = |kind, size| Checked { kind, size };
    assert_eq!(
        post(Kind::WinningPost, 0).check().unwrap(),
        checked(Kind::WinningPost, SectorSize::S2KiB)
    );
    assert_eq!(
        post(Kind::WindowPost, 10).check().unwrap(),
        checked(Kind::WindowPost, SectorSize::S2KiB)
    );
    assert_eq!(
        post(Kind::Snap, 0).check().unwrap(),
        checked(Kind::Snap, SectorSize::S2KiB)
    );
    // A WindowPoSt proof number sent as a WinningPoSt, another size, the PoRep field.
    assert!(fields(&post(Kind::WinningPost, 10)).contains("is a window-post proof"));
    assert_eq!(
        post(Kind::WindowPost, 11).check().unwrap().size,
        SectorSize::S8MiB
    );
    let r = Request {
        vanilla_proof: b"{}",
        ..post(Kind::Snap, 0)
    };
    assert!(fields(&r).contains("vanilla_proof is a PoRep C2"));
    let r = Request {
        vanilla_proofs: &[],
        ..post(Kind::WinningPost, 0)
    };
    assert!(fields(&r).contains("vanilla_proofs is empty"));
    let many = vec![vec![]; MAX_VANILLA_PROOFS + 1];
    let r = Request {
        vanilla_proofs: &many,
        ..post(Kind::WinningPost, 0)
    };
    assert!(fields(&r).contains("at most"));
}

#[test]
fn a_miners_prover_id_is_its_leb128() {
    assert_eq!(&prover_id_of_miner(1000)[..3], &[0xe8, 0x07, 0]);
}
