//! What fails in vanilla proofs that Filecoin's verifier refused: the partition, the challenge
//! and the check, found by running the verifier's own checks one at a time, so a refused
//! request says which of its parts is wrong. The verdict itself stays the verifier's.

mod porep;
mod post;
mod snap;

pub(crate) use porep::porep;
pub(crate) use post::post;
pub(crate) use snap::snap;
