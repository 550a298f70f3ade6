//! Where a command writes: checks that an output is not one of the command's inputs and not a
//! symbolic link, a whole-file writer that renames a finished temporary file into place (an
//! export or a config file is either the old one or the new one, never half), and the in-place
//! file a recording goes to (so a killed recorder keeps what it wrote).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output path is refused before any work starts (the CLI exits with 2).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output is the same file as one of the command's inputs.
    #[error("{flag} {}: it is {what} {}: writing there would destroy it", out.display(), input.display())]
    IsInput {
        /// The command-line flag that named the output (`--record`).
        flag: String,
        /// The output as given.
        out: PathBuf,
        /// What the input is, e.g. `the recording`.
        what: String,
        /// The input as given.
        input: PathBuf,
    },
    /// The output is a symbolic link.
    #[error("{flag} {}: is a symbolic link; give the file it points to", out.display())]
    Symlink {
        /// The command-line flag that named the output.
        flag: String,
        /// The output as given.
        out: PathBuf,
    },
    /// The output exists and overwriting was not asked for.
    #[error("{flag} {}: the file exists; add --force to overwrite it", out.display())]
    Exists {
        /// The command-line flag that named the output.
        flag: String,
        /// The output as given.
        out: PathBuf,
    },
    /// The output is a folder.
    #[error("{flag} {}: is a folder, not a file", out.display())]
    Folder {
        /// The command-line flag that named the output.
        flag: String,
        /// The output as given.
        out: PathBuf,
    },
    /// The output's folder does not exist.
    #[error("{flag} {}: no folder {} to write into", out.display(), dir.display())]
    NoFolder {
        /// The command-line flag that named the output.
        flag: String,
        /// The output as given.
        out: PathBuf,
        /// The folder that is missing.
        dir: PathBuf,
    },
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist, else
/// the same canonical folder and name.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    match (canonical(a), canonical(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// A path made absolute through its folder, which must exist (the file need not).
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
}

/// Checks an output before work starts: not one of `inputs` (`(what, path)`, e.g.
/// `("the recording", FILE)`), not a symbolic link or a folder, and not an existing file
/// unless `overwrite`.
pub fn check(
    flag: &str,
    out: &Path,
    inputs: &[(&str, &Path)],
    overwrite: bool,
) -> Result<(), OutputError> {
    for (what, input) in inputs {
        if same_file(out, input) {
            return Err(OutputError::IsInput {
                flag: flag.into(),
                out: out.into(),
                what: (*what).into(),
                input: input.to_path_buf(),
            });
        }
    }
    if let Ok(m) = std::fs::symlink_metadata(out) {
        let (flag, out) = (flag.to_string(), out.to_path_buf());
        if m.file_type().is_symlink() {
            return Err(OutputError::Symlink { flag, out });
        }
        if m.is_dir() {
            return Err(OutputError::Folder { flag, out });
        }
        if !overwrite {
            return Err(OutputError::Exists { flag, out });
        }
        return Ok(());
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(OutputError::NoFolder {
            flag: flag.into(),
            out: out.into(),
            dir: dir.into(),
        });
    }
    Ok(())
}

/// Opens a recording's file, written in place: a new file, or with `overwrite` an existing
/// one truncated; never through a symbolic link at the last component.
pub fn create_in_place(path: &Path, overwrite: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true);
    if overwrite {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link; give the file it points to",
            ));
        }
        o.create(true).truncate(true);
    } else {
        // O_EXCL: fails on anything already there, a symbolic link included.
        o.create_new(true);
    }
    o.open(path)
}

/// Writes a whole file through `write`: into a temporary file beside `path`, renamed over it
/// once `write` succeeded and the bytes are on disk. On any error the temporary file is
/// removed and `path` is as it was.
pub fn write_whole<T, E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<T, E>,
) -> Result<T, E> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = path.with_file_name(tmp_name);
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let result = write(&mut w).and_then(|v| {
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        Ok(v)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `write_whole` of a byte string.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        let r: io::Result<()> = write_whole(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("the disk is full"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_bytes(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn inputs_links_folders_and_existing_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.ptrec");
        std::fs::write(&input, "x").unwrap();
        // The same file by another spelling.
        let other = dir.path().join(".").join("in.ptrec");
        let e = check("--perfetto", &other, &[("the recording", &input)], true).unwrap_err();
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        assert!(e.to_string().contains("the recording"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
            let e = check("--record", &link, &[], true).unwrap_err();
            assert!(matches!(e, OutputError::Symlink { .. }), "{e}");
            assert!(create_in_place(&link, true).is_err());
            assert!(create_in_place(&link, false).is_err());
            assert!(!dir.path().join("elsewhere").exists());
        }
        let e = check("--record", &input, &[], false).unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        assert!(check("--record", &input, &[], true).is_ok());
        let e = check("--record", dir.path(), &[], true).unwrap_err();
        assert!(matches!(e, OutputError::Folder { .. }), "{e}");
        assert!(check("--record", &dir.path().join("new"), &[], false).is_ok());
        let e = check("--record", &dir.path().join("no/new"), &[], false).unwrap_err();
        assert!(matches!(e, OutputError::NoFolder { .. }), "{e}");
        assert!(create_in_place(&input, false).is_err());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "x");
    }
}
