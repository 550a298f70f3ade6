//! A proof file before any verifier sees it: a whole number of 192-byte Groth16 proofs (A in
//! G1, B in G2, C in G1, compressed), each point decoding. A file that is not that is bad input
//! (exit 2); a point off the curve or outside its subgroup is a proof that cannot verify
//! (exit 1), said in words.

use blst::min_pk::{PublicKey, Signature};
use blst::BLST_ERROR;
use std::path::Path;

/// Bytes of one compressed proof.
pub const PROOF_BYTES: usize = 192;

/// What is wrong with a proof file.
#[derive(Debug, PartialEq)]
pub enum Shape {
    /// Not proofs at all: bad input, naming the file.
    Malformed(String),
    /// Well-formed proofs, one of which cannot verify: why, in words.
    Invalid(String),
}

/// Checks `bytes`, read from `path`: Ok with the number of proofs, or what is wrong.
pub fn check(path: &Path, bytes: &[u8]) -> Result<usize, Shape> {
    let file = path.display();
    if bytes.is_empty() || bytes.len() % PROOF_BYTES != 0 {
        return Err(Shape::Malformed(format!(
            "{file}: {} bytes is not a whole number of {PROOF_BYTES}-byte proofs",
            bytes.len()
        )));
    }
    let n = bytes.len() / PROOF_BYTES;
    for (i, proof) in bytes.chunks(PROOF_BYTES).enumerate() {
        let which = match n {
            1 => String::new(),
            _ => format!("proof {i}'s "),
        };
        let points = [
            ("A", point_g1(&proof[..48])),
            ("B", point_g2(&proof[48..144])),
            ("C", point_g1(&proof[144..])),
        ];
        for (name, r) in points {
            match r {
                Ok(()) => {}
                Err(BLST_ERROR::BLST_POINT_NOT_ON_CURVE) => {
                    return Err(Shape::Invalid(format!(
                        "{file}'s {which}{name} is not on the curve"
                    )))
                }
                Err(BLST_ERROR::BLST_POINT_NOT_IN_GROUP) => {
                    return Err(Shape::Invalid(format!(
                        "{file}'s {which}{name} is not in the prime-order subgroup"
                    )))
                }
                Err(_) => {
                    return Err(Shape::Malformed(format!(
                        "{file}: {which}{name} is not a compressed point (its flag bits or \
                         coordinate are out of range): not a proof file"
                    )))
                }
            }
        }
    }
    Ok(n)
}

fn point_g1(b: &[u8]) -> Result<(), BLST_ERROR> {
    let p = PublicKey::uncompress(b)?;
    match p.validate() {
        // The point at infinity decodes; a proof may hold it.
        Err(BLST_ERROR::BLST_PK_IS_INFINITY) => Ok(()),
        r => r,
    }
}

fn point_g2(b: &[u8]) -> Result<(), BLST_ERROR> {
    let p = Signature::uncompress(b)?;
    match p.validate(true) {
        Err(BLST_ERROR::BLST_PK_IS_INFINITY) => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::prime::PrimeCurveAffine;

    fn good() -> Vec<u8> {
        let mut v = blstrs::G1Affine::generator().to_compressed().to_vec();
        v.extend(blstrs::G2Affine::generator().to_compressed());
        v.extend(blstrs::G1Affine::generator().to_compressed());
        v
    }

    #[test]
    fn proofs_decode_and_what_is_not_is_named() {
        let p = Path::new("proof.bin");
        assert_eq!(check(p, &good()), Ok(1));
        let two = [good(), good()].concat();
        assert_eq!(check(p, &two), Ok(2));
        let Err(Shape::Malformed(m)) = check(p, &good()[..100]) else {
            panic!("100 bytes passed")
        };
        assert_eq!(
            m,
            "proof.bin: 100 bytes is not a whole number of 192-byte proofs"
        );
        let mut bad = good();
        bad[0] = 0xff;
        assert!(
            matches!(check(p, &bad), Err(Shape::Malformed(m)) if m.contains("A is not a compressed point"))
        );
        let mut off = good();
        off[..48].copy_from_slice(&off_curve());
        assert_eq!(
            check(p, &off),
            Err(Shape::Invalid("proof.bin's A is not on the curve".into()))
        );
    }

    /// A compressed x whose curve equation has no solution.
    pub(crate) fn off_curve() -> [u8; 48] {
        (1u8..)
            .map(|x| {
                let mut b = [0u8; 48];
                b[0] = 0x80;
                b[47] = x;
                b
            })
            .find(|b| PublicKey::uncompress(b) == Err(BLST_ERROR::BLST_POINT_NOT_ON_CURVE))
            .unwrap_or([0; 48])
    }
}
