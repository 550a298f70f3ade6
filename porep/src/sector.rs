//! Sector sizes and proof versions, named as Filecoin's registered seal proofs name them.

use anyhow::{bail, Result};
use filecoin_proofs::{
    PoRepConfig, SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};
use storage_proofs_core::api_version::ApiVersion;

/// Runs `$f::<Tree>($args)` with the merkle tree type of a sector size.
macro_rules! with_tree {
    ($size:expr, $f:ident ( $($args:expr),* )) => {
        match $size {
            $crate::sector::SectorSize::S2KiB
            | $crate::sector::SectorSize::S8MiB
            | $crate::sector::SectorSize::S512MiB => {
                $f::<filecoin_proofs::constants::SectorShapeBase>($($args),*)
            }
            $crate::sector::SectorSize::S32GiB => {
                $f::<filecoin_proofs::constants::SectorShape32GiB>($($args),*)
            }
            $crate::sector::SectorSize::S64GiB => {
                $f::<filecoin_proofs::constants::SectorShape64GiB>($($args),*)
            }
        }
    };
}
pub(crate) use with_tree;

/// The sector sizes of Filecoin's registered seal proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SectorSize {
    /// 2 KiB: a test size, sealable here.
    S2KiB,
    /// 8 MiB: a test size, sealable here.
    S8MiB,
    /// 512 MiB: the largest size sealable here.
    S512MiB,
    /// 32 GiB: a production size; its C1 output comes from a file.
    S32GiB,
    /// 64 GiB: a production size; its C1 output comes from a file.
    S64GiB,
}

impl SectorSize {
    /// Every size, smallest first: the order of the registered proofs' numbers.
    pub const ALL: [SectorSize; 5] = [
        SectorSize::S2KiB,
        SectorSize::S8MiB,
        SectorSize::S512MiB,
        SectorSize::S32GiB,
        SectorSize::S64GiB,
    ];

    /// The sector's size in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::S2KiB => SECTOR_SIZE_2_KIB,
            SectorSize::S8MiB => SECTOR_SIZE_8_MIB,
            SectorSize::S512MiB => SECTOR_SIZE_512_MIB,
            SectorSize::S32GiB => SECTOR_SIZE_32_GIB,
            SectorSize::S64GiB => SECTOR_SIZE_64_GIB,
        }
    }

    /// Filecoin's name for the size (`2KiB`, `32GiB`), as registered proofs and `--sector-size`
    /// spell it.
    pub fn name(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2KiB",
            SectorSize::S8MiB => "8MiB",
            SectorSize::S512MiB => "512MiB",
            SectorSize::S32GiB => "32GiB",
            SectorSize::S64GiB => "64GiB",
        }
    }

    /// The size of `bytes`; an error names the sizes there are.
    pub fn from_bytes(bytes: u64) -> Result<SectorSize> {
        match SectorSize::ALL.into_iter().find(|s| s.bytes() == bytes) {
            Some(s) => Ok(s),
            None => bail!(
                "{bytes} bytes is not a Filecoin sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)"
            ),
        }
    }

    /// Test sizes can be sealed here in reasonable time; the production ones come from C1 files.
    pub fn sealable(self) -> bool {
        matches!(
            self,
            SectorSize::S2KiB | SectorSize::S8MiB | SectorSize::S512MiB
        )
    }

    /// Index of this size among the registered seal proofs of one version.
    fn index(self) -> u64 {
        SectorSize::ALL
            .iter()
            .position(|s| *s == self)
            .expect("ALL lists every size") as u64
    }
}

impl std::str::FromStr for SectorSize {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<SectorSize> {
        match SectorSize::ALL
            .into_iter()
            .find(|x| x.name().eq_ignore_ascii_case(s.trim()))
        {
            Some(x) => Ok(x),
            None => bail!("unknown sector size `{s}`: expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB"),
        }
    }
}

impl std::fmt::Display for SectorSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The seal proof versions whose C2 is a plain set of Groth16 partition proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofVersion {
    /// The original stacked-DRG seal proofs (`StackedDrg32GiBV1`).
    V1,
    /// The seal proofs of API version 1.1 (`StackedDrg32GiBV1_1`).
    V1_1,
}

impl ProofVersion {
    /// `StackedDrg32GiBV1_1` and the like: the registered proof's name.
    pub fn registered_name(self, size: SectorSize) -> String {
        let v = match self {
            ProofVersion::V1 => "V1",
            ProofVersion::V1_1 => "V1_1",
        };
        format!("StackedDrg{}{v}", size.name())
    }

    /// Reads a registered proof's name; the synthetic and non-interactive variants are named
    /// in the error.
    pub fn parse_registered(name: &str) -> Result<(SectorSize, ProofVersion)> {
        for size in SectorSize::ALL {
            for v in [ProofVersion::V1, ProofVersion::V1_1] {
                if v.registered_name(size) == name {
                    return Ok((size, v));
                }
            }
        }
        if name.starts_with("StackedDrg") {
            bail!("registered proof `{name}` is not supported: only the V1 and V1_1 seal proofs (no synthetic or non-interactive PoRep)")
        }
        bail!("`{name}` is not a registered seal proof")
    }

    /// The size and version of filecoin-proofs-api's registered seal proof number `id` (what
    /// Curio sends as `registered_proof`); the synthetic and non-interactive ones are named in
    /// the error.
    pub fn from_registered_id(id: u64) -> Result<(SectorSize, ProofVersion)> {
        for size in SectorSize::ALL {
            for v in [ProofVersion::V1, ProofVersion::V1_1] {
                if v.registered_id(size) == id {
                    return Ok((size, v));
                }
            }
        }
        match id {
            10..=22 => bail!("registered seal proof {id} is not supported: only the V1 and V1_1 seal proofs (0-9; no synthetic or non-interactive PoRep)"),
            _ => bail!("{id} is not a registered seal proof number (0-9)"),
        }
    }

    fn api_version(self) -> ApiVersion {
        match self {
            ProofVersion::V1 => ApiVersion::V1_0_0,
            ProofVersion::V1_1 => ApiVersion::V1_1_0,
        }
    }

    /// The registered proof's number, as filecoin-proofs-api numbers them.
    pub fn registered_id(self, size: SectorSize) -> u64 {
        match self {
            ProofVersion::V1 => size.index(),
            ProofVersion::V1_1 => 5 + size.index(),
        }
    }

    /// The porep id: the registered proof's number and a zero nonce, little-endian.
    pub fn porep_id(self, size: SectorSize) -> [u8; 32] {
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&self.registered_id(size).to_le_bytes());
        id
    }

    /// filecoin-proofs' configuration of this version's seal proof for `size`: partitions, porep
    /// id, API version.
    pub fn porep_config(self, size: SectorSize) -> PoRepConfig {
        PoRepConfig::new_groth16(size.bytes(), self.porep_id(size), self.api_version())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for size in SectorSize::ALL {
            assert_eq!(size.name().parse::<SectorSize>().unwrap(), size);
            assert_eq!(SectorSize::from_bytes(size.bytes()).unwrap(), size);
            let name = ProofVersion::V1_1.registered_name(size);
            assert_eq!(
                ProofVersion::parse_registered(&name).unwrap(),
                (size, ProofVersion::V1_1)
            );
        }
        assert!("3KiB".parse::<SectorSize>().is_err());
        assert_eq!(
            ProofVersion::from_registered_id(8).unwrap(),
            (SectorSize::S32GiB, ProofVersion::V1_1)
        );
        assert_eq!(
            ProofVersion::from_registered_id(0).unwrap(),
            (SectorSize::S2KiB, ProofVersion::V1)
        );
        assert!(ProofVersion::from_registered_id(12).is_err());
        assert!(ProofVersion::from_registered_id(u64::MAX).is_err());
        assert!(ProofVersion::parse_registered("StackedDrg2KiBV1_1_Feat_SyntheticPoRep").is_err());
        // StackedDrg32GiBV1_1 is registered proof 8, as in filecoin-proofs-api.
        assert_eq!(ProofVersion::V1_1.porep_id(SectorSize::S32GiB)[0], 8);
    }

    #[test]
    fn partitions_are_filecoins() {
        assert_eq!(
            ProofVersion::V1_1
                .porep_config(SectorSize::S32GiB)
                .partitions
                .0,
            10
        );
        assert_eq!(
            ProofVersion::V1_1
                .porep_config(SectorSize::S2KiB)
                .partitions
                .0,
            1
        );
    }
}
