//! The kernel command line: `init=PATH`, `loglevel=N`, `root=/dev/X` with
//! `rootfstype=`, `rootflags=`, `ro`/`rw`, and everything after `--` as
//! init's arguments (as Linux does).

use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug, Default)]
pub struct Args {
    pub init: Option<String>,
    pub init_args: Vec<String>,
    pub loglevel: Option<u8>,
    /// An in-kernel check to run instead of init (see ktest.rs).
    pub ktest: Option<String>,
    /// `root=`: the block device to mount as `/` instead of the initramfs.
    pub root: Option<String>,
    pub rootfstype: Option<String>,
    pub rootflags: Option<String>,
    /// `rw` on the command line: the root is mounted read-write (Linux
    /// mounts it read-only unless told so).
    pub root_rw: bool,
}

pub fn parse(cmdline: &str) -> Args {
    let mut args = Args::default();
    let mut words = cmdline.split_ascii_whitespace();
    for w in words.by_ref() {
        if w == "--" {
            break;
        }
        match w.split_once('=') {
            Some(("init", v)) => args.init = Some(String::from(v)),
            Some(("loglevel", v)) => args.loglevel = v.parse().ok(),
            Some(("ktest", v)) => args.ktest = Some(String::from(v)),
            Some(("root", v)) => args.root = Some(String::from(v)),
            Some(("rootfstype", v)) => args.rootfstype = Some(String::from(v)),
            Some(("rootflags", v)) => args.rootflags = Some(String::from(v)),
            Some(("failslab", v)) => crate::fallible::boot_param(v),
            Some(("drivers.crash", v)) => crate::domains::boot_param(v),
            None if w == "rw" => args.root_rw = true,
            None if w == "ro" => args.root_rw = false,
            _ => {} // console=ttyS0 and unknown options are ignored
        }
    }
    args.init_args = words.map(String::from).collect();
    args
}
