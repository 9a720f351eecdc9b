//! Output: standard output that survives a closed pipe, and result files written atomically.
//!
//! Printing to standard output: a closed pipe (`wakesim run | head`) ends the program quietly,
//! as it does for any Unix tool, instead of panicking. Result files are written to a temporary
//! file beside the target and renamed, so an interrupted run never leaves a half-written file
//! that looks complete.

use crate::UserError;
use std::io::Write;
use std::path::Path;

thread_local! {
    /// Where `out` writes on this thread while [`capture`] runs (the in-process API).
    static CAPTURE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's standard output collected into a string instead.
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, String) {
    let old = CAPTURE.with(|c| c.borrow_mut().replace(String::new()));
    let r = f();
    let text = CAPTURE.with(|c| std::mem::replace(&mut *c.borrow_mut(), old)).unwrap_or_default();
    (r, text)
}

pub fn out(s: &str) {
    if CAPTURE.with(|c| c.borrow_mut().as_mut().map(|b| b.push_str(s)).is_some()) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(s.as_bytes()).and_then(|_| o.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("wakesim: error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

/// `println!` through [`out`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::out("\n") };
    ($($arg:tt)*) => { $crate::output::out(&format!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`out`].
#[macro_export]
macro_rules! outp {
    ($($arg:tt)*) => { $crate::output::out(&format!($($arg)*)) };
}


/// Whether a result file can be created at `path` (its directory exists and is a directory).
pub fn check_writable(path: &Path) -> Result<(), UserError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(UserError(format!("cannot write {}: directory {} does not exist", path.display(), dir.display())));
    }
    if path.file_name().is_none() {
        return Err(UserError(format!("cannot write {}: not a file name", path.display())));
    }
    Ok(())
}

pub fn write_atomic(path: &Path, contents: &str) -> Result<(), UserError> {
    write_atomic_with(path, |f| f.write_all(contents.as_bytes()))
}

/// Like [`write_atomic`], for output produced by a writer function (streamed, not held in memory).
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> Result<(), UserError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(UserError(format!("cannot write {}: directory {} does not exist", path.display(), dir.display())));
    }
    let name = path.file_name().ok_or_else(|| UserError(format!("cannot write {}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(UserError(format!("cannot write {}: {e}", path.display())));
    }
    Ok(())
}
