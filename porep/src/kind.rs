//! The four proofs a Filecoin rig makes, by the names the command line, cuzk and Curio give them.

use anyhow::{bail, Result};

use crate::sector::SectorSize;

/// A kind of Filecoin proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// PoRep C2: a sealed sector's commitment (`seal_commit_phase2`).
    Porep,
    /// SnapDeals: new data encoded into a sealed sector (`prove_replica_update2`).
    Snap,
    /// One partition of a WindowPoSt (a deadline: 30 minutes).
    WindowPost,
    /// A WinningPoSt (a block: one epoch, about 30 seconds).
    WinningPost,
}

impl Kind {
    /// Every kind, in the order of cuzk's `ProofKind` numbers.
    pub const ALL: [Kind; 4] = [Kind::Porep, Kind::Snap, Kind::WindowPost, Kind::WinningPost];

    /// The name `--workload`, `--kind` and `--mix` take: `porep`, `snap`, `window-post`,
    /// `winning-post`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Porep => "porep",
            Kind::Snap => "snap",
            Kind::WindowPost => "window-post",
            Kind::WinningPost => "winning-post",
        }
    }

    /// cuzk's name of a parameter set of this kind for `size`: `porep-32g`, `snap-2k`,
    /// `wpost-8m`, `winning-32g`.
    pub fn circuit_id(self, size: SectorSize) -> String {
        let kind = match self {
            Kind::Porep => "porep",
            Kind::Snap => "snap",
            Kind::WindowPost => "wpost",
            Kind::WinningPost => "winning",
        };
        let size = match size {
            SectorSize::S2KiB => "2k",
            SectorSize::S8MiB => "8m",
            SectorSize::S512MiB => "512m",
            SectorSize::S32GiB => "32g",
            SectorSize::S64GiB => "64g",
        };
        format!("{kind}-{size}")
    }

    /// The kind and size of a `circuit_id` of [`Kind::circuit_id`]'s form.
    pub fn of_circuit_id(id: &str) -> Result<(Kind, SectorSize)> {
        for kind in Kind::ALL {
            for size in SectorSize::ALL {
                if kind.circuit_id(size) == id {
                    return Ok((kind, size));
                }
            }
        }
        bail!("unknown circuit_id `{id}`: expected porep-, snap-, wpost- or winning- and a size (2k, 8m, 512m, 32g, 64g), such as porep-32g")
    }

    /// filecoin-proofs' verifier of this kind's proofs, as messages name it.
    pub fn verifier(self) -> &'static str {
        match self {
            Kind::Porep => "verify_seal",
            Kind::Snap => "verify_empty_sector_update_proof",
            Kind::WindowPost => "verify_window_post",
            Kind::WinningPost => "verify_winning_post",
        }
    }
}

impl std::str::FromStr for Kind {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Kind> {
        match Kind::ALL.into_iter().find(|k| k.name() == s.trim()) {
            Some(k) => Ok(k),
            None => {
                bail!("unknown proof kind `{s}`: expected porep, snap, window-post or winning-post")
            }
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in Kind::ALL {
            assert_eq!(kind.name().parse::<Kind>().unwrap(), kind);
            for size in SectorSize::ALL {
                let id = kind.circuit_id(size);
                assert_eq!(Kind::of_circuit_id(&id).unwrap(), (kind, size));
            }
        }
        assert_eq!(Kind::WindowPost.circuit_id(SectorSize::S32GiB), "wpost-32g");
        assert_eq!(Kind::Porep.circuit_id(SectorSize::S2KiB), "porep-2k");
        assert!(Kind::of_circuit_id("wpost-3g").is_err());
        assert!("window_post".parse::<Kind>().is_err());
    }
}
