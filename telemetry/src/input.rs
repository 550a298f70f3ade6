//! Where a command reads: only regular files, opened without blocking (a FIFO named as an input
//! would otherwise wait forever for a writer), and whole-file reads with a bound on their size
//! checked before and while reading (a device such as /dev/zero says it holds 0 bytes and never
//! ends).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// What a non-regular file is, in words, for the message that refuses it.
pub(crate) fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The bound on a small file written by hand or by a tool: a config file, a theme, a PEM
/// certificate or key, a proof.
pub const SMALL_FILE: u64 = 1 << 20;

/// Opens `path` for reading when it is a regular file; anything else (a folder, a FIFO, a
/// device, a socket) is refused with an `InvalidInput` error saying what it is. Opened with
/// `O_NONBLOCK`, checked on the open descriptor (no race with a rename in between).
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: only a regular file is read", kind_of(t)),
        ));
    }
    Ok(file)
}

/// The whole of the regular file `path`, refused when it holds more than `max` bytes (said in
/// the error) or grows past it while being read.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(too_large(len, max));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64, max));
    }
    Ok(bytes)
}

/// `read_regular` of UTF-8 text.
pub fn read_regular_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, max)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
}

fn too_large(len: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{len} bytes or more: larger than the {max} bytes read from such a file"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(read_regular(&f, 5).unwrap(), b"hello");
        let e = read_regular(&f, 4).unwrap_err().to_string();
        assert!(e.contains("larger than the 4 bytes"), "{e}");
        let e = read_regular(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        // A device that never ends is refused before a byte is read.
        let e = read_regular(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a character device"), "{e}");
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        let e = read_regular(&fifo, 10).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
