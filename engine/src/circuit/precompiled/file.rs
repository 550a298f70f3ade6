//! A recorded circuit on disk: a header (counts, the shape's digest, CRC-32s of itself and of
//! the body), then the coefficient table as canonical little-endian field elements and the
//! three matrices' arrays as little-endian u32s. Reading checks all of it, and the matrices'
//! structure, before anything indexes them: a damaged or foreign file is an error, never
//! trusted.

use anyhow::{bail, Context, Result};
use blstrs::Scalar;
use ff::Field;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use super::matrix::{densities, Csr};
use super::Precompiled;
use crate::hostmem::as_bytes;

const MAGIC: &[u8; 8] = b"PTR1CS\0\0";
const VERSION: u32 = 1;
/// Magic, version, 7 counts, digest, two CRCs.
const HEADER: usize = 8 + 4 + 7 * 8 + 32 + 4 + 4;

// The arrays are written and read as they lie in memory.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "recorded circuits are little-endian"
);

/// Writes `pc` to `path` through a temporary file, so a reader never sees half a file.
pub fn save(pc: &Precompiled, path: &Path) -> Result<()> {
    provetop_telemetry::output::write_whole(path, |w| write(pc, w))
        .with_context(|| format!("writing {}", path.display()))
}

/// The bytes the table takes on disk, canonical (never Montgomery) so that reading can refuse
/// a value outside the field.
fn table_bytes(table: &[Scalar]) -> Vec<u8> {
    table.iter().flat_map(|s| s.to_bytes_le()).collect()
}

fn sections(pc: &Precompiled) -> Vec<&[u32]> {
    [&pc.a, &pc.b, &pc.c]
        .into_iter()
        .flat_map(|m| [&m.row_ptr[..], &m.cols[..], &m.coeff[..]])
        .collect()
}

fn write(pc: &Precompiled, mut w: impl Write) -> Result<()> {
    let table = table_bytes(&pc.table);
    let mut body = crc32fast::Hasher::new();
    body.update(&table);
    for s in sections(pc) {
        body.update(as_bytes(s));
    }
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    let counts = [
        pc.num_inputs,
        pc.num_aux,
        pc.num_constraints,
        pc.table.len(),
        pc.a.nnz(),
        pc.b.nnz(),
        pc.c.nnz(),
    ];
    for n in counts {
        h.extend_from_slice(&(n as u64).to_le_bytes());
    }
    h.extend_from_slice(&digest_bytes(&pc.digest)?);
    h.extend_from_slice(&body.finalize().to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(&h).to_le_bytes());
    w.write_all(&h)?;
    w.write_all(&table)?;
    for s in sections(pc) {
        w.write_all(as_bytes(s))?;
    }
    w.flush()?;
    Ok(())
}

fn digest_bytes(hex: &str) -> Result<[u8; 32]> {
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        bail!("a digest of {} characters", hex.len());
    }
    for (o, pair) in out.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *o = u8::from_str_radix(std::str::from_utf8(pair)?, 16)?;
    }
    Ok(out)
}

/// Reads and checks a recorded circuit.
pub fn load(path: &Path) -> Result<Precompiled> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = file.metadata()?.len();
    read(BufReader::with_capacity(1 << 20, file), len)
        .with_context(|| format!("reading {}", path.display()))
}

fn read(mut r: impl Read, len: u64) -> Result<Precompiled> {
    let mut h = [0u8; HEADER];
    r.read_exact(&mut h).context("shorter than its header")?;
    if &h[..8] != MAGIC {
        bail!("not a recorded circuit");
    }
    let word = |at: usize| u32::from_le_bytes(h[at..at + 4].try_into().expect("a 4-byte slice"));
    if word(HEADER - 4) != crc32fast::hash(&h[..HEADER - 4]) {
        bail!("its header is damaged (CRC mismatch)");
    }
    if word(8) != VERSION {
        bail!("format version {}, this build reads {VERSION}", word(8));
    }
    let count = |i: usize| {
        u64::from_le_bytes(
            h[12 + 8 * i..20 + 8 * i]
                .try_into()
                .expect("an 8-byte slice"),
        )
    };
    let [ni, na, nc, nt, nnz_a, nnz_b, nnz_c] = std::array::from_fn(count);
    // The counts must add up to the file's length (checked arithmetic: they are not trusted
    // yet), which also bounds every allocation below by the file's size.
    let rows = nc.saturating_add(ni);
    let ptrs = rows.checked_add(1).and_then(|r| r.checked_mul(4));
    let want = [nt.checked_mul(32), ptrs, ptrs, ptrs]
        .into_iter()
        .chain([nnz_a, nnz_b, nnz_c].map(|n| n.checked_mul(8)))
        .try_fold(HEADER as u64, |s, x| s.checked_add(x?));
    if want != Some(len) {
        bail!("{len} bytes where its header counts {want:?}: truncated or damaged");
    }
    let mut crc = crc32fast::Hasher::new();
    let mut table = vec![0u8; nt as usize * 32];
    r.read_exact(&mut table)?;
    crc.update(&table);
    let mut matrix = |nnz: u64| -> Result<Csr> {
        let mut m = Csr {
            row_ptr: vec![0; rows as usize + 1],
            cols: vec![0; nnz as usize],
            coeff: vec![0; nnz as usize],
        };
        for s in [&mut m.row_ptr, &mut m.cols, &mut m.coeff] {
            let bytes = u32s_mut(s);
            r.read_exact(bytes)?;
            crc.update(bytes);
        }
        Ok(m)
    };
    let (a, b, c) = (matrix(nnz_a)?, matrix(nnz_b)?, matrix(nnz_c)?);
    if crc.finalize() != word(HEADER - 8) {
        bail!("its contents are damaged (CRC mismatch)");
    }
    // The table is `nt * 32` bytes, so every chunk is a whole element.
    let table = table
        .chunks(32)
        .map(|b| Option::from(Scalar::from_bytes_le(b.try_into().expect("32-byte chunks"))))
        .collect::<Option<Vec<Scalar>>>()
        .context("a coefficient outside the field")?;
    if table.len() < 2 || table[0] != Scalar::ONE || table[1] != -Scalar::ONE {
        bail!("its coefficient table does not start with 1, −1");
    }
    let (ni, na) = (ni as usize, na as usize);
    for (name, m) in [("A", &a), ("B", &b), ("C", &c)] {
        m.check(rows as usize, ni + na, table.len())
            .with_context(|| format!("matrix {name} is malformed"))?;
    }
    let (_, a_aux_density) = densities(&a, ni, na);
    let (b_input_density, b_aux_density) = densities(&b, ni, na);
    Ok(Precompiled {
        num_inputs: ni,
        num_aux: na,
        num_constraints: nc as usize,
        digest: crate::circuit::shape::hex(&h[68..100]),
        table,
        a,
        b,
        c,
        a_aux_density,
        b_input_density,
        b_aux_density,
    })
}

/// u32s as their bytes, writable (every byte pattern is a u32).
fn u32s_mut(s: &mut [u32]) -> &mut [u8] {
    // SAFETY: plain integers without padding; the view borrows `s`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_round_trip_through_their_bytes() {
        let hex = "00ff10a0".repeat(8);
        assert_eq!(
            crate::circuit::shape::hex(&digest_bytes(&hex).unwrap()),
            hex
        );
        assert!(digest_bytes("abc").is_err());
    }
}
