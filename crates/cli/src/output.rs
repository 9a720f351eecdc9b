//! Writing result files atomically: write to a temporary file beside the target, then rename,
//! so an interrupted run never leaves a half-written file that looks complete.

use crate::UserError;
use std::io::Write;
use std::path::Path;

pub fn write_atomic(path: &Path, contents: &str) -> Result<(), UserError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(UserError(format!("cannot write {}: directory {} does not exist", path.display(), dir.display())));
    }
    let name = path.file_name().ok_or_else(|| UserError(format!("cannot write {}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(UserError(format!("cannot write {}: {e}", path.display())));
    }
    Ok(())
}
