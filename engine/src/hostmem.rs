//! Host memory: how much the system has available, and the primitives for the partition-sized
//! copies of the GPU path: copies whose destination the CPU does not read again (page-locked
//! blocks the copy engines read) go around the caches, so a destination line is not read from
//! memory before it is overwritten.

use blstrs::Scalar;

/// MemAvailable of /proc/meminfo, in bytes.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The most page-locked memory the prestaging pool grows to: half the memory available (64 GiB
/// assumed where /proc/meminfo cannot be read). One figure for the pool and for `auto`'s reason.
pub fn page_locked_ceiling() -> u64 {
    available_memory().unwrap_or(64 << 30) / 2
}

/// Plain data: a type without padding bytes, pointers or references, for which every byte
/// pattern of its size is a valid value (what bytemuck calls `Pod`). Its values may be viewed
/// as bytes, and bytes (from a file or a device) read back as values.
///
/// # Safety
///
/// Implement only for such types: `#[repr(C)]` or `#[repr(transparent)]` over integers or
/// arrays of them, with no padding between or after fields.
pub unsafe trait PlainData: Copy + Send + Sync + 'static {}

// SAFETY: integers have no padding, and every bit pattern is a value.
unsafe impl PlainData for u8 {}
// SAFETY: as for u8.
unsafe impl PlainData for u32 {}
// SAFETY: as for u8.
unsafe impl PlainData for u64 {}
// SAFETY: blstrs' Scalar is repr(transparent) over blst_fr, four u64 limbs (32 bytes, no
// padding); any limbs are a value (a non-canonical one is the arithmetic's concern, not memory
// safety's).
unsafe impl PlainData for Scalar {}
// SAFETY: repr(transparent) over blst_p1_affine, two blst_fp of six u64 limbs (96 bytes, no
// padding); any limbs are a value, as for Scalar.
unsafe impl PlainData for blstrs::G1Affine {}
// SAFETY: repr(transparent) over blst_p2_affine, two blst_fp2 of twelve u64 limbs (192 bytes,
// no padding); as for G1Affine.
unsafe impl PlainData for blstrs::G2Affine {}

// SAFETY: arrays lay their elements out without gaps; plain elements make a plain array.
unsafe impl<T: PlainData, const N: usize> PlainData for [T; N] {}

/// The bytes of plain-data values as they lie in memory.
///
/// ```
/// assert_eq!(provetop_engine::hostmem::as_bytes(&[1u32, 2]), [1, 0, 0, 0, 2, 0, 0, 0]);
/// ```
///
/// A type with padding (whose padding bytes are uninitialised) is refused:
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy)]
/// struct Padded {
///     a: u8,
///     b: u64,
/// }
/// let _ = provetop_engine::hostmem::as_bytes(&[Padded { a: 1, b: 2 }]);
/// ```
pub fn as_bytes<T: PlainData>(s: &[T]) -> &[u8] {
    // SAFETY: `PlainData` types have no padding, so every byte is initialised; the view
    // borrows `s` and covers exactly its bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

/// The bytes of plain-data values, writable: any bytes written are values again.
pub fn as_bytes_mut<T: PlainData>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as for `as_bytes`, and every byte pattern is a `PlainData` value; the view
    // borrows `s` mutably, so nothing else reads it meanwhile.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

/// Scalars as their bytes (blst_fr: 32 bytes of plain data, the Montgomery form), writable.
pub fn bytes_mut(s: &mut [Scalar]) -> &mut [u8] {
    // SAFETY: plain data without padding; every byte pattern is a valid blst_fr (four u64
    // limbs); the view borrows `s`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

/// Bytes as scalars, for writing a block's section in place: whole 32-byte elements at an
/// 8-byte aligned address (both checked).
pub fn scalars_mut(b: &mut [u8]) -> &mut [Scalar] {
    assert!(b.len() % 32 == 0 && b.as_ptr().align_offset(std::mem::align_of::<Scalar>()) == 0);
    // SAFETY: aligned, whole elements, and any bytes are a valid blst_fr; borrows `b`.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut Scalar, b.len() / 32) }
}

/// Copies `src` to `dst` (equal lengths) with streaming stores where the platform has them
/// (x86-64: 16-byte non-temporal stores at 16-byte aligned addresses), a plain copy elsewhere
/// and for an unaligned head or tail. Ends with a store fence: the bytes are visible to whoever
/// synchronises with this thread afterwards.
pub fn stream_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        dst[..head].copy_from_slice(&src[..head]);
        let body = (dst.len() - head) / 16 * 16;
        let (d, s) = (dst[head..].as_mut_ptr(), src[head..].as_ptr());
        for i in (0..body).step_by(16) {
            // SAFETY: i + 16 ≤ body, within both slices; the destination is 16-byte aligned.
            unsafe {
                let v = _mm_loadu_si128(s.add(i) as *const __m128i);
                _mm_stream_si128(d.add(i) as *mut __m128i, v);
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
        // SAFETY: a store fence has no preconditions.
        unsafe { _mm_sfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Copies 32-byte elements from `src` to `dst` (equal lengths, whole elements), writing zeros
/// in place of every element equal to `zeroed`; streaming stores as `stream_copy`.
pub fn stream_copy_zeroing(dst: &mut [u8], src: &[u8], zeroed: &[u8; 32]) {
    assert_eq!(dst.len(), src.len());
    assert_eq!(dst.len() % 32, 0);
    #[cfg(target_arch = "x86_64")]
    if dst.as_ptr().align_offset(16) == 0 {
        use std::arch::x86_64::_mm_stream_si128;
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_setzero_si128, _mm_sfence};
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        for (i, e) in src.chunks_exact(32).enumerate() {
            // SAFETY: element i lies within both slices; the destination is 16-byte aligned.
            unsafe {
                let (lo, hi) = if e == zeroed {
                    (_mm_setzero_si128(), _mm_setzero_si128())
                } else {
                    (
                        _mm_loadu_si128(s.add(32 * i) as *const __m128i),
                        _mm_loadu_si128(s.add(32 * i + 16) as *const __m128i),
                    )
                };
                _mm_stream_si128(d.add(32 * i) as *mut __m128i, lo);
                _mm_stream_si128(d.add(32 * i + 16) as *mut __m128i, hi);
            }
        }
        // SAFETY: a store fence has no preconditions.
        unsafe { _mm_sfence() };
        return;
    }
    for (d, s) in dst.chunks_exact_mut(32).zip(src.chunks_exact(32)) {
        if s == zeroed {
            d.fill(0);
        } else {
            d.copy_from_slice(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroing_copies_replace_exactly_the_matching_elements() {
        let one = [1u8; 32];
        let mut src = vec![];
        for i in 0..100u8 {
            src.extend(if i % 3 == 0 { one } else { [i; 32] });
        }
        let want: Vec<u8> = src
            .chunks(32)
            .flat_map(|e| {
                if e == one {
                    [0u8; 32]
                } else {
                    e.try_into().unwrap()
                }
            })
            .collect();
        let mut buf = vec![0xEEu8; src.len() + 16];
        for start in [0, 8, 16] {
            let dst = &mut buf[start..start + src.len()];
            stream_copy_zeroing(dst, &src, &one);
            assert_eq!(dst, &want[..], "start {start}");
        }
    }

    #[test]
    fn stream_copy_copies_every_byte_at_any_alignment() {
        let src: Vec<u8> = (0..4099u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = vec![0u8; 4200];
        for start in 0..17 {
            for len in [0, 1, 15, 16, 17, 100, 4000] {
                buf.fill(0xEE);
                stream_copy(&mut buf[start..start + len], &src[..len]);
                assert_eq!(
                    &buf[start..start + len],
                    &src[..len],
                    "start {start} len {len}"
                );
                assert!(buf[..start].iter().all(|b| *b == 0xEE), "nothing before");
                assert!(
                    buf[start + len..].iter().all(|b| *b == 0xEE),
                    "nothing after"
                );
            }
        }
    }
}
