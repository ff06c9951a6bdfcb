//! Damaged images: mke2fs images with random bytes changed (fixed seeds)
//! are mounted, walked (every directory listed, every file and symlink
//! read) and written to. Errors are expected; a panic fails the test.

mod common;

use std::cell::RefCell;
use std::collections::HashSet;

use common::*;
use ext2::{BlockIo, FileKind, Fs, NewInode, ROOT_INO};

const IMAGES: u64 = 240;

fn base_image(bs: u32) -> Vec<u8> {
    let d = scratch("fuzzbase");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("a/b/c")).unwrap();
    for i in 0..40 {
        std::fs::write(src.join(format!("a/f{i}")), vec![i as u8; i * 300]).unwrap();
    }
    std::fs::write(src.join("a/b/big"), vec![7u8; 300_000]).unwrap();
    std::os::unix::fs::symlink("a/b/big", src.join("fast")).unwrap();
    std::os::unix::fs::symlink("z/".repeat(50), src.join("slow")).unwrap();
    std::fs::hard_link(src.join("a/f3"), src.join("a/b/c/f3")).unwrap();
    let f = std::fs::File::create(src.join("sparse")).unwrap();
    f.set_len(3 << 20).unwrap();
    let img = mkimage(&d, bs, 2048, Some(&src), &["-N", "128"]);
    let raw = std::fs::read(&img).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    raw
}

fn mutate(raw: &mut [u8], rng: &mut Rng) {
    let n = 1 + rng.below(24);
    for _ in 0..n {
        // The superblock, the descriptors (block 1 or 2), the bitmaps,
        // inode table and first directory blocks at the front, or anywhere.
        let at = match rng.below(20) {
            0..=2 => 1024 + rng.below(1024),
            3..=5 => 2048 + rng.below(4096),
            6..=15 => 1024 + rng.below(160 * 1024),
            _ => 1024 + rng.below(raw.len() as u64 - 1024),
        } as usize;
        match rng.below(3) {
            0 => raw[at] = rng.next() as u8,
            1 => raw[at] ^= 1 << rng.below(8),
            _ => {
                // A 32-bit value (pointer, count) set to something nasty.
                let v: u32 = [0, 1, 2, 0xffff_ffff, 0x8000_0000, rng.next() as u32 % 4096]
                    [rng.below(6) as usize];
                let at = at & !3;
                if at + 4 <= raw.len() {
                    raw[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
}

/// Walks the whole tree; returns how many inodes it visited.
fn walk<D: BlockIo>(fs: &mut Fs<D>) -> usize {
    let mut seen = HashSet::new();
    let mut stack = vec![ROOT_INO];
    let mut buf = vec![0u8; 64 * 1024];
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir) || seen.len() > 10_000 {
            continue;
        }
        let Ok(entries) = list(fs, dir) else { continue };
        for (name, ino) in entries {
            if name == b"." || name == b".." {
                continue;
            }
            let _ = fs.lookup(dir, &name);
            let Ok(i) = fs.inode(ino) else { continue };
            match i.kind() {
                Some(FileKind::Directory) => stack.push(ino),
                Some(FileKind::Regular) => {
                    // Bounded: at most 1 MiB per file.
                    let mut off = 0u64;
                    while off < i.size().min(1 << 20) {
                        match fs.read(ino, off, &mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => off += n as u64,
                        }
                    }
                }
                Some(FileKind::Symlink) => {
                    let _ = fs.read_link(ino);
                }
                _ => {}
            }
        }
    }
    seen.len()
}

fn writes<D: BlockIo>(fs: &mut Fs<D>, rng: &mut Rng) {
    let reg = NewInode {
        kind: FileKind::Regular,
        perm: 0o644,
        uid: 0,
        gid: 0,
    };
    let dir = NewInode {
        kind: FileKind::Directory,
        perm: 0o755,
        uid: 0,
        gid: 0,
    };
    if let Ok(f) = fs.create(ROOT_INO, b"new-file", reg) {
        let _ = fs.write(f, rng.below(100_000), &rng.bytes(5000));
        let _ = fs.truncate(f, rng.below(50_000));
    }
    let _ = fs.create(ROOT_INO, b"new-dir", dir);
    if let Ok(a) = fs.lookup(ROOT_INO, b"a") {
        let _ = fs.rename(a, b"f5", ROOT_INO, b"renamed", false);
        let _ = fs.rename(ROOT_INO, b"a", ROOT_INO, b"a2", false);
        if let Ok((ino, 0)) = fs.unlink(a, b"f7") {
            let _ = fs.evict(ino);
        }
        if let Ok(b) = fs.lookup(a, b"b") {
            if let Ok(big) = fs.lookup(b, b"big") {
                let _ = fs.truncate(big, rng.below(300_000));
                let _ = fs.write(big, rng.below(400_000), &[1; 3000]);
            }
            if let Ok(c) = fs.lookup(b, b"c") {
                let _ = fs.unlink(c, b"f3");
                if let Ok(ino) = fs.rmdir(b, b"c") {
                    let _ = fs.evict(ino);
                }
            }
        }
    }
    let _ = fs.symlink(ROOT_INO, b"new-link", &[b'q'; 100], 0, 0);
    let _ = fs.statfs();
    let _ = fs.sync();
}

#[test]
fn mutated_images_never_panic() {
    if !have_e2fsprogs() {
        eprintln!("SKIP: e2fsprogs not installed");
        return;
    }
    let bases = [base_image(1024), base_image(4096)];
    // EXT2_FUZZ_IMAGES=N runs a longer campaign with the same seeds first.
    let images = std::env::var("EXT2_FUZZ_IMAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(IMAGES);
    let (mut mounted, mut refused, mut walked) = (0, 0, 0);
    for seed in 1..=images {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut raw = bases[(seed % 2) as usize].clone();
        mutate(&mut raw, &mut rng);
        let dev = MemDev(RefCell::new(raw));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut fs = match Fs::mount(dev, rw()) {
                Ok(fs) => fs,
                Err(e) => {
                    // A refused mount says why, with EINVAL or EUCLEAN.
                    assert!(matches!(e.errno(true), 22 | 117 | 5), "{e:?}");
                    return None;
                }
            };
            let n = walk(&mut fs);
            writes(&mut fs, &mut rng);
            let n2 = walk(&mut fs);
            let _ = fs.unmount();
            Some(n + n2)
        }));
        match r {
            Ok(Some(n)) => {
                mounted += 1;
                walked += n;
            }
            Ok(None) => refused += 1,
            Err(_) => panic!("seed {seed} panicked"),
        }
    }
    eprintln!("{images} images: {mounted} mounted ({walked} inodes walked), {refused} refused");
    assert_eq!(mounted + refused, images as usize);
    assert!(
        mounted > images as usize / 4,
        "mutations too destructive to exercise the walk"
    );
}
