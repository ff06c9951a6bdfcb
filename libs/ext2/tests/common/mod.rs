//! Host test support: images built by the host's mke2fs in a file, a
//! `BlockIo` over that file, and the host's e2fsck/debugfs as oracles.

#![allow(dead_code)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use ext2::{BlockIo, Error, Fs, MountOptions, Result};

pub struct FileDev {
    pub file: File,
    pub size: u64,
}

impl BlockIo for FileDev {
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|e| e > self.size)
        {
            return Err(Error::Io);
        }
        self.file.read_exact_at(buf, offset).map_err(|_| Error::Io)
    }
    fn write(&self, offset: u64, buf: &[u8]) -> Result<()> {
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|e| e > self.size)
        {
            return Err(Error::Io);
        }
        self.file.write_all_at(buf, offset).map_err(|_| Error::Io)
    }
    fn size(&self) -> u64 {
        self.size
    }
}

/// A memory-backed device (the fuzz test mutates images in memory).
pub struct MemDev(pub std::cell::RefCell<Vec<u8>>);

impl BlockIo for MemDev {
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let d = self.0.borrow();
        let s = usize::try_from(offset).map_err(|_| Error::Io)?;
        let src = d
            .get(s..s.checked_add(buf.len()).ok_or(Error::Io)?)
            .ok_or(Error::Io)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write(&self, offset: u64, buf: &[u8]) -> Result<()> {
        let mut d = self.0.borrow_mut();
        let s = usize::try_from(offset).map_err(|_| Error::Io)?;
        let dst = d
            .get_mut(s..s.checked_add(buf.len()).ok_or(Error::Io)?)
            .ok_or(Error::Io)?;
        dst.copy_from_slice(buf);
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.borrow().len() as u64
    }
}

pub fn now() -> u32 {
    1_700_000_000
}

pub fn rw() -> MountOptions {
    MountOptions {
        read_only: false,
        errors: None,
        now,
    }
}

pub fn scratch(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("ext2-test-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn have_e2fsprogs() -> bool {
    Command::new("mke2fs").arg("-V").output().is_ok()
        && Command::new("e2fsck").arg("-V").output().is_ok()
}

/// Builds an ext2 image of `kib` KiB with `block` byte blocks, filled from
/// `from` when given; `extra` are more mke2fs arguments.
pub fn mkimage(dir: &Path, block: u32, kib: u64, from: Option<&Path>, extra: &[&str]) -> PathBuf {
    let img = dir.join("fs.img");
    let f = File::create(&img).unwrap();
    f.set_len(kib * 1024).unwrap();
    drop(f);
    let mut cmd = Command::new("mke2fs");
    cmd.args([
        "-q",
        "-F",
        "-t",
        "ext2",
        "-b",
        &block.to_string(),
        "-E",
        "root_owner=0:0",
    ]);
    cmd.args(extra);
    if let Some(d) = from {
        cmd.arg("-d").arg(d);
    }
    cmd.arg(&img);
    let out = cmd.output().expect("mke2fs");
    assert!(
        out.status.success(),
        "mke2fs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    img
}

pub fn open(img: &Path) -> FileDev {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(img)
        .unwrap();
    let size = file.metadata().unwrap().len();
    FileDev { file, size }
}

pub fn mount(img: &Path) -> Fs<FileDev> {
    Fs::mount(open(img), rw()).expect("mount")
}

/// `e2fsck -fn`: Ok if clean, Err(report) otherwise.
pub fn fsck(img: &Path) -> std::result::Result<(), String> {
    let out = Command::new("e2fsck")
        .arg("-fn")
        .arg(img)
        .output()
        .expect("e2fsck");
    if out.status.code() == Some(0) {
        Ok(())
    } else {
        Err(format!(
            "e2fsck exit {:?}\n{}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

pub fn assert_clean(img: &Path) {
    if let Err(e) = fsck(img) {
        panic!("{e}");
    }
}

pub fn debugfs(img: &Path, req: &str) -> Vec<u8> {
    let out = Command::new("debugfs")
        .arg("-R")
        .arg(req)
        .arg(img)
        .output()
        .expect("debugfs");
    out.stdout
}

/// Resolves an absolute path (no symlinks followed).
pub fn resolve<D: BlockIo>(fs: &mut Fs<D>, path: &str) -> Result<u32> {
    let mut ino = ext2::ROOT_INO;
    for c in path.split('/').filter(|c| !c.is_empty()) {
        ino = fs.lookup(ino, c.as_bytes())?;
    }
    Ok(ino)
}

pub fn read_all<D: BlockIo>(fs: &mut Fs<D>, ino: u32) -> Result<Vec<u8>> {
    let size = fs.inode(ino)?.size() as usize;
    let mut buf = vec![0u8; size];
    let n = fs.read(ino, 0, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

pub fn list<D: BlockIo>(fs: &mut Fs<D>, dir: u32) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut v = Vec::new();
    fs.read_dir(dir, 0, &mut |e| {
        v.push((e.name, e.ino));
        true
    })?;
    Ok(v)
}

/// Deterministic pseudo-random numbers (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
