//! Builds `record`'s lock-log library (preload/lock_log.c) as a shared object to embed: the
//! `cc` crate finds the C compiler the Rust toolchain links with, so no extra tool is needed.
use std::path::PathBuf;

fn main() {
    let src = "preload/lock_log.c";
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("liblocklog.so");
    let compiler = cc::Build::new().opt_level(2).warnings(true).get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-Wall", "-o"])
        .arg(&out)
        .arg(src)
        .arg("-ldl")
        .status()
        .expect("run the C compiler for preload/lock_log.c");
    assert!(status.success(), "building preload/lock_log.c failed");
}
