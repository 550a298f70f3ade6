//! bellperson's file layouts: `Parameters::write` (verifying key, then H, L, A, B_G1, B_G2 as a
//! big-endian u32 count and uncompressed points), `VerifyingKey::write` and `Proof::write`.
//! Reading streams the file in chunks, decodes points in parallel, and never trusts a count
//! beyond what the file can hold.

use anyhow::{bail, Context, Result};
use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use super::{Parameters, VerifyingKey};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
/// Points decoded per parallel batch while streaming.
const BATCH: usize = 1 << 16;

/// Writes `vk` as bellperson's `VerifyingKey::write`: six uncompressed points, then the IC count
/// (big-endian u32) and points.
pub fn write_vk<W: Write>(vk: &VerifyingKey, mut w: W) -> std::io::Result<()> {
    w.write_all(&vk.alpha_g1.to_uncompressed())?;
    w.write_all(&vk.beta_g1.to_uncompressed())?;
    w.write_all(&vk.beta_g2.to_uncompressed())?;
    w.write_all(&vk.gamma_g2.to_uncompressed())?;
    w.write_all(&vk.delta_g1.to_uncompressed())?;
    w.write_all(&vk.delta_g2.to_uncompressed())?;
    write_points(&vk.ic, &mut w)
}

fn write_points<P: Point + Sync, W: Write>(points: &[P], w: &mut W) -> std::io::Result<()> {
    w.write_all(&(points.len() as u32).to_be_bytes())?;
    for chunk in points.chunks(BATCH) {
        let bytes: Vec<u8> = chunk.par_iter().flat_map_iter(P::encode).collect();
        w.write_all(&bytes)?;
    }
    Ok(())
}

/// Writes `p` as bellperson's `Parameters::write`: the verifying key, then H, L, A, B_G1 and B_G2,
/// each a big-endian u32 count and uncompressed points.
pub fn write_params<W: Write>(p: &Parameters, mut w: W) -> std::io::Result<()> {
    write_vk(&p.vk, &mut w)?;
    write_points(&p.h, &mut w)?;
    write_points(&p.l, &mut w)?;
    write_points(&p.a, &mut w)?;
    write_points(&p.b_g1, &mut w)?;
    write_points(&p.b_g2, &mut w)?;
    w.flush()
}

/// Writes to `path` through a temporary file and a rename, so a crash never leaves half a file.
pub fn save_params(p: &Parameters, path: &Path) -> Result<()> {
    provetop_telemetry::output::write_whole(path, |w| write_params(p, w))
        .with_context(|| format!("writing {}", path.display()))
}

/// Reads a bellperson parameter file: points checked to be on their curves (subgroups are left to
/// the verifier), no count trusted past what the file holds.
pub fn load_params(path: &Path) -> Result<Parameters> {
    let file = provetop_telemetry::input::open_regular(path)
        .with_context(|| format!("opening params file {}", path.display()))?;
    let len = file.metadata()?.len();
    read_params(BufReader::with_capacity(1 << 20, file), Some(len))
        .with_context(|| format!("reading params file {}", path.display()))
}

/// Reads the verifying key at the start of `path`: a `.vk` file (nothing may follow) or a
/// parameter file (`whole` false: the queries that follow are not read).
pub fn load_vk(path: &Path, whole: bool) -> Result<VerifyingKey> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = file.metadata()?.len();
    let mut r = Reader {
        inner: BufReader::new(file),
        offset: 0,
        len: Some(len),
    };
    let vk = r
        .vk()
        .with_context(|| format!("reading the verifying key in {}", path.display()))?;
    if whole && r.offset != len {
        bail!(
            "{}: {} unexpected bytes after the verifying key",
            path.display(),
            len - r.offset
        );
    }
    Ok(vk)
}

/// The lengths of the IC, H and L queries of a parameter file, read from its verifying key and
/// two length fields (seeking over the H points): enough to refuse a file made for another
/// circuit in milliseconds, before loading tens of gigabytes.
pub fn peek_counts(path: &Path) -> Result<(usize, usize, usize)> {
    use std::io::{Seek, SeekFrom};
    let file = provetop_telemetry::input::open_regular(path)
        .with_context(|| format!("opening params file {}", path.display()))?;
    let len = file.metadata()?.len();
    let mut r = Reader {
        inner: BufReader::new(file),
        offset: 0,
        len: Some(len),
    };
    let vk = r
        .vk()
        .with_context(|| format!("reading params file {}", path.display()))?;
    let mut count = [0u8; 4];
    r.exact(&mut count, "the length of the H query")?;
    let h = u32::from_be_bytes(count) as usize;
    let l_at = r.offset + (h * G1_BYTES) as u64;
    if l_at + 4 > len {
        bail!(
            "params file {} is truncated: its H query claims {h} points",
            path.display()
        );
    }
    r.inner.seek(SeekFrom::Start(l_at))?;
    r.offset = l_at;
    r.exact(&mut count, "the length of the L query")?;
    Ok((vk.ic.len(), h, u32::from_be_bytes(count) as usize))
}

/// A reader that knows its offset (for messages) and, when it can, the bytes that remain.
struct Reader<R> {
    inner: R,
    offset: u64,
    len: Option<u64>,
}

trait Point: Sized + Send {
    const BYTES: usize;
    const NAME: &'static str;
    fn decode(bytes: &[u8]) -> Option<Self>;
    fn encode(&self) -> Vec<u8>;
}

impl Point for G1Affine {
    const BYTES: usize = G1_BYTES;
    const NAME: &'static str = "G1";
    fn decode(bytes: &[u8]) -> Option<Self> {
        // blst checks the point is on the curve; subgroup checks are left to the verifier,
        // which rejects any proof that bad parameters produce.
        Option::from(G1Affine::from_uncompressed_unchecked(
            bytes.try_into().ok()?,
        ))
    }
    fn encode(&self) -> Vec<u8> {
        self.to_uncompressed().to_vec()
    }
}

impl Point for G2Affine {
    const BYTES: usize = G2_BYTES;
    const NAME: &'static str = "G2";
    fn decode(bytes: &[u8]) -> Option<Self> {
        Option::from(G2Affine::from_uncompressed_unchecked(
            bytes.try_into().ok()?,
        ))
    }
    fn encode(&self) -> Vec<u8> {
        self.to_uncompressed().to_vec()
    }
}

impl<R: Read> Reader<R> {
    fn exact(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        if let Err(e) = self.inner.read_exact(buf) {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                bail!(
                    "file is truncated: {what} needs {} bytes at offset {}",
                    buf.len(),
                    self.offset
                );
            }
            return Err(e.into());
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn point<P: Point>(&mut self, what: &str) -> Result<P> {
        let mut buf = vec![0u8; P::BYTES];
        let at = self.offset;
        self.exact(&mut buf, what)?;
        P::decode(&buf).with_context(|| {
            format!("not a bellperson parameter file: {what} at offset {at} is not a valid uncompressed {} point", P::NAME)
        })
    }

    fn points<P: Point>(&mut self, what: &str) -> Result<Vec<P>> {
        let mut count = [0u8; 4];
        self.exact(&mut count, &format!("the length of {what}"))?;
        let count = u32::from_be_bytes(count) as usize;
        if let Some(len) = self.len {
            let need = count as u64 * P::BYTES as u64;
            let have = len.saturating_sub(self.offset);
            if need > have {
                bail!(
                    "file is truncated or not a parameter file: {what} claims {count} points ({need} bytes) at offset {}, but only {have} bytes remain",
                    self.offset
                );
            }
        }
        let mut out = Vec::with_capacity(count.min(BATCH));
        let mut buf = vec![0u8; BATCH * P::BYTES];
        while out.len() < count {
            let n = (count - out.len()).min(BATCH);
            let start = self.offset;
            self.exact(&mut buf[..n * P::BYTES], what)?;
            let decoded: Vec<Option<P>> = buf[..n * P::BYTES]
                .par_chunks(P::BYTES)
                .map(P::decode)
                .collect();
            if let Some(bad) = decoded.iter().position(Option::is_none) {
                bail!(
                    "{what}: point {} at offset {} is not a valid uncompressed {} point",
                    out.len() + bad,
                    start + (bad * P::BYTES) as u64,
                    P::NAME
                );
            }
            out.extend(decoded.into_iter().flatten());
        }
        Ok(out)
    }

    fn vk(&mut self) -> Result<VerifyingKey> {
        Ok(VerifyingKey {
            alpha_g1: self.point("vk.alpha_g1")?,
            beta_g1: self.point("vk.beta_g1")?,
            beta_g2: self.point("vk.beta_g2")?,
            gamma_g2: self.point("vk.gamma_g2")?,
            delta_g1: self.point("vk.delta_g1")?,
            delta_g2: self.point("vk.delta_g2")?,
            ic: self.points("vk.ic")?,
        })
    }
}

/// Reads parameters; `len`, when known, bounds every count the file claims.
pub fn read_params<R: Read>(inner: R, len: Option<u64>) -> Result<Parameters> {
    let mut r = Reader {
        inner,
        offset: 0,
        len,
    };
    let vk = r.vk()?;
    let p = Parameters {
        vk,
        h: r.points("the H query")?,
        l: r.points("the L query")?,
        a: r.points("the A query")?,
        b_g1: r.points("the B_G1 query")?,
        b_g2: r.points("the B_G2 query")?,
    };
    if let Some(len) = len {
        if r.offset != len {
            bail!(
                "{} unexpected bytes after the B_G2 query at offset {}",
                len - r.offset,
                r.offset
            );
        }
    }
    Ok(p)
}
