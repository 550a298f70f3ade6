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
    /// The output exists and is not a regular file (a FIFO, a device, a socket): writing
    /// would feed or replace it.
    #[error("{flag} {}: is {what}; an output goes only to a regular or a new file", out.display())]
    NotRegular {
        /// The command-line flag that named the output.
        flag: String,
        /// The output as given.
        out: PathBuf,
        /// What it is, e.g. `a FIFO`.
        what: &'static str,
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
        if !m.is_file() {
            let what = crate::input::kind_of(m.file_type());
            return Err(OutputError::NotRegular { flag, out, what });
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

/// Opens a recording's file, written in place: a new file, or with `overwrite` a new file in
/// place of an existing regular one; never through a symbolic link at the last component,
/// never onto a FIFO or a device.
pub fn create_in_place(path: &Path, overwrite: bool) -> io::Result<File> {
    if overwrite {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            let refuse = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
            if m.file_type().is_symlink() {
                return refuse("is a symbolic link; give the file it points to".into());
            }
            if !m.is_file() {
                let what = crate::input::kind_of(m.file_type());
                return refuse(format!("is {what}; only a regular file is replaced"));
            }
            // Unlinked, not truncated: another hard link to the old file keeps its bytes.
            std::fs::remove_file(path)?;
        }
    }
    // O_EXCL: fails on anything already there, a symbolic link included.
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// The name of the `n`-th earlier file of `path`: `serve.ptrec` → `serve.N.ptrec` (`serve.N`
/// without an extension).
pub fn numbered(path: &Path, n: u32) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match path.extension() {
        Some(ext) => path.with_file_name(format!("{stem}.{n}.{}", ext.to_string_lossy())),
        None => path.with_file_name(format!("{stem}.{n}")),
    }
}

/// Moves an existing regular file `path` aside for a new run, as log rotation does: `path`
/// becomes `numbered(path, 1)`, the 1st the 2nd, …, and the `keep`-th is removed. Returns where
/// the file moved, `None` when there was none. A FIFO, a device, a folder or a symbolic link at
/// `path` is refused and nothing moves.
pub fn rotate(path: &Path, keep: u32) -> io::Result<Option<PathBuf>> {
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !m.is_file() {
        let what = match m.file_type().is_symlink() {
            true => "a symbolic link",
            false => crate::input::kind_of(m.file_type()),
        };
        let why = format!("is {what}; only a regular file is moved aside");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    let keep = keep.max(1);
    match std::fs::remove_file(numbered(path, keep)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for n in (1..keep).rev() {
        match std::fs::rename(numbered(path, n), numbered(path, n + 1)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let first = numbered(path, 1);
    std::fs::rename(path, &first)?;
    Ok(Some(first))
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
    // A FIFO or a device at `path` is never replaced by the rename.
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.is_file() && !m.file_type().is_symlink() {
            let what = crate::input::kind_of(m.file_type());
            let why = format!("is {what}; an output goes only to a regular or a new file");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why).into());
        }
    }
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

    #[test]
    fn fifos_and_devices_are_never_outputs_and_a_hard_link_keeps_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for special in [fifo.as_path(), Path::new("/dev/null")] {
            let e = check("--perfetto", special, &[], true).unwrap_err();
            assert!(matches!(e, OutputError::NotRegular { .. }), "{e}");
            assert!(create_in_place(special, true).is_err());
            assert!(write_bytes(special, b"x").is_err());
        }
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        // --force onto one name of a hard-linked file: the other name keeps the old bytes.
        let (a, b) = (dir.path().join("a.ptrec"), dir.path().join("b.ptrec"));
        std::fs::write(&a, "shared").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        let mut f = create_in_place(&a, true).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "shared");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new");
    }

    #[test]
    fn rotation_keeps_the_last_runs_and_moves_only_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("serve.ptrec");
        assert_eq!(numbered(&p, 2), dir.path().join("serve.2.ptrec"));
        assert_eq!(rotate(&p, 3).unwrap(), None);
        for run in 0..5 {
            std::fs::write(&p, format!("run {run}")).unwrap();
            assert_eq!(rotate(&p, 3).unwrap(), Some(numbered(&p, 1)));
            assert!(!p.exists());
        }
        let read = |n| std::fs::read_to_string(numbered(&p, n)).unwrap();
        assert_eq!(
            (read(1), read(2), read(3)),
            ("run 4".into(), "run 3".into(), "run 2".into())
        );
        assert!(!numbered(&p, 4).exists());
        std::fs::create_dir(&p).unwrap();
        assert!(rotate(&p, 3).unwrap_err().to_string().contains("a folder"));
        assert_eq!(read(1), "run 4");
    }
}
