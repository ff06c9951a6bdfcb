//! Workloads on images made by the host's mke2fs, each checked with the
//! host's `e2fsck -fn` (and `debugfs` for contents) after a clean unmount.

mod common;

use common::*;
use ext2::{Error, FileKind, Fs, NewInode, ROOT_INO};

fn reg(perm: u16) -> NewInode {
    NewInode {
        kind: FileKind::Regular,
        perm,
        uid: 1000,
        gid: 100,
    }
}

fn dir(perm: u16) -> NewInode {
    NewInode {
        kind: FileKind::Directory,
        perm,
        uid: 0,
        gid: 0,
    }
}

macro_rules! need_tools {
    () => {
        if !have_e2fsprogs() {
            eprintln!("SKIP: e2fsprogs not installed");
            return;
        }
    };
}

fn populate_host_tree(src: &std::path::Path) {
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    std::fs::write(src.join("hello.txt"), b"hello, ext2\n").unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(src.join("sub/big.bin"), &big).unwrap();
    std::fs::write(src.join("sub/deeper/empty"), b"").unwrap();
    std::os::unix::fs::symlink("hello.txt", src.join("fast-link")).unwrap();
    let long = "x/".repeat(40) + "target";
    std::os::unix::fs::symlink(&long, src.join("slow-link")).unwrap();
    let f = std::fs::File::create(src.join("sparse")).unwrap();
    f.set_len(5 << 20).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_all_at(b"tail", (5 << 20) - 4).unwrap();
    std::fs::hard_link(src.join("hello.txt"), src.join("sub/hello-again")).unwrap();
}

fn check_host_tree<D: ext2::BlockIo>(fs: &mut Fs<D>) {
    let h = resolve(fs, "/hello.txt").unwrap();
    assert_eq!(read_all(fs, h).unwrap(), b"hello, ext2\n");
    assert_eq!(resolve(fs, "/sub/hello-again").unwrap(), h);
    assert_eq!(fs.inode(h).unwrap().links(), 2);
    let b = resolve(fs, "/sub/big.bin").unwrap();
    let big = read_all(fs, b).unwrap();
    assert_eq!(big.len(), 300_000);
    assert!(
        big.iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u32 * 7 % 251) as u8)
    );
    let l = resolve(fs, "/fast-link").unwrap();
    assert_eq!(fs.read_link(l).unwrap(), b"hello.txt");
    let l = resolve(fs, "/slow-link").unwrap();
    assert_eq!(
        fs.read_link(l).unwrap(),
        ("x/".repeat(40) + "target").as_bytes()
    );
    let s = resolve(fs, "/sparse").unwrap();
    let data = read_all(fs, s).unwrap();
    assert_eq!(data.len(), 5 << 20);
    assert!(data[..(5 << 20) - 4].iter().all(|&x| x == 0));
    assert_eq!(&data[(5 << 20) - 4..], b"tail");
    let names: Vec<Vec<u8>> = list(fs, ROOT_INO)
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for want in [
        &b"."[..],
        b"..",
        b"hello.txt",
        b"sub",
        b"fast-link",
        b"slow-link",
        b"sparse",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "missing {}",
            String::from_utf8_lossy(want)
        );
    }
    assert_eq!(fs.lookup(ROOT_INO, b"nope"), Err(Error::NotFound));
}

#[test]
fn reads_a_tree_built_by_mke2fs_with_1k_and_4k_blocks() {
    need_tools!();
    for bs in [1024, 4096] {
        let d = scratch("read");
        let src = d.join("src");
        populate_host_tree(&src);
        let img = mkimage(&d, bs, 16 * 1024, Some(&src), &[]);
        let mut fs = mount(&img);
        check_host_tree(&mut fs);
        fs.unmount().unwrap();
        assert_clean(&img);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn three_hundred_files_are_clean_under_e2fsck() {
    need_tools!();
    for bs in [1024, 4096] {
        let d = scratch("300");
        let img = mkimage(&d, bs, 32 * 1024, None, &[]);
        let mut fs = mount(&img);
        let top = fs.create(ROOT_INO, b"many", dir(0o755)).unwrap();
        let mut rng = Rng(42);
        let mut expect = Vec::new();
        for i in 0..300 {
            let name = format!("file-{i:03}");
            let ino = fs.create(top, name.as_bytes(), reg(0o644)).unwrap();
            let len = rng.below(20_000) as usize;
            let data = rng.bytes(len);
            assert_eq!(fs.write(ino, 0, &data).unwrap(), len);
            expect.push((name, data));
        }
        for (name, data) in &expect {
            let ino = fs.lookup(top, name.as_bytes()).unwrap();
            assert_eq!(&read_all(&mut fs, ino).unwrap(), data);
        }
        assert_eq!(list(&mut fs, top).unwrap().len(), 302);
        fs.unmount().unwrap();
        drop(fs);
        assert_clean(&img);
        assert_eq!(debugfs(&img, "cat /many/file-123"), expect[123].1);
        // And again after a remount.
        let mut fs = mount(&img);
        let ino = resolve(&mut fs, "/many/file-299").unwrap();
        assert_eq!(read_all(&mut fs, ino).unwrap(), expect[299].1);
        fs.unmount().unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn big_sparse_file_reads_holes_as_zeros_and_truncates_cleanly() {
    need_tools!();
    for bs in [1024, 4096] {
        let d = scratch("sparse");
        let img = mkimage(&d, bs, 64 * 1024, None, &[]);
        let mut fs = mount(&img);
        let ino = fs.create(ROOT_INO, b"sparse", reg(0o600)).unwrap();
        let free0 = fs.statfs().free_blocks;
        // Direct, single, double and (for 1 KiB blocks) triple indirect.
        let offsets: [u64; 5] = [0, 100 * 1024, 1 << 20, 40 << 20, (1u64 << 32) + 5];
        for (k, &o) in offsets.iter().enumerate() {
            fs.write(ino, o, &[k as u8 + 1; 3000]).unwrap();
        }
        assert_eq!(fs.inode(ino).unwrap().size(), (1u64 << 32) + 5 + 3000);
        for (k, &o) in offsets.iter().enumerate() {
            let mut buf = vec![0u8; 3100];
            fs.read(ino, o, &mut buf).unwrap();
            assert!(buf[..3000].iter().all(|&x| x == k as u8 + 1));
            let mut hole = vec![1u8; 512];
            let n = fs.read(ino, o + 3000 + 4096 * 3, &mut hole).unwrap();
            assert!(
                hole[..n].iter().all(|&x| x == 0),
                "hole after {o} not zero (bs {bs}): {:?}",
                &hole[..16]
            );
        }
        fs.unmount().unwrap();
        assert_clean(&img);
        // Truncate in steps down to 0, checking after each one.
        for size in [(40u64 << 20) + 100, (1 << 20) + 10, 5000, 0] {
            let mut fs = mount(&img);
            fs.truncate(ino, size).unwrap();
            let mut buf = vec![9u8; 200];
            let n = fs.read(ino, size.saturating_sub(100), &mut buf).unwrap();
            assert_eq!(n as u64, size.min(100));
            fs.unmount().unwrap();
            drop(fs);
            assert_clean(&img);
        }
        let mut fs = mount(&img);
        assert_eq!(
            fs.statfs().free_blocks,
            free0,
            "truncate to 0 gives every block back"
        );
        // Growing truncate leaves a hole; the old tail was zeroed.
        fs.write(ino, 0, &[7u8; 100]).unwrap();
        fs.truncate(ino, 50).unwrap();
        fs.truncate(ino, 10_000).unwrap();
        let data = read_all(&mut fs, ino).unwrap();
        assert!(data[..50].iter().all(|&x| x == 7) && data[50..].iter().all(|&x| x == 0));
        fs.unmount().unwrap();
        assert_clean(&img);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn directory_with_thousands_of_entries() {
    need_tools!();
    for bs in [1024, 4096] {
        let d = scratch("bigdir");
        let img = mkimage(&d, bs, 32 * 1024, None, &["-N", "8192"]);
        let mut fs = mount(&img);
        let top = fs.create(ROOT_INO, b"big", dir(0o755)).unwrap();
        for i in 0..4000 {
            let name = format!("entry-with-a-longish-name-{i}");
            fs.create(top, name.as_bytes(), reg(0o644)).unwrap();
        }
        assert!(fs.inode(top).unwrap().size() > 20 * u64::from(bs));
        for i in (0..4000).step_by(2) {
            let name = format!("entry-with-a-longish-name-{i}");
            let (ino, links) = fs.unlink(top, name.as_bytes()).unwrap();
            assert_eq!(links, 0);
            fs.evict(ino).unwrap();
        }
        for i in 0..4000 {
            let name = format!("entry-with-a-longish-name-{i}");
            let r = fs.lookup(top, name.as_bytes());
            assert_eq!(r.is_ok(), i % 2 == 1, "{name}");
        }
        // Freed slots are reused.
        let size = fs.inode(top).unwrap().size();
        for i in 0..1000 {
            fs.create(top, format!("n{i}").as_bytes(), reg(0o644))
                .unwrap();
        }
        assert_eq!(fs.inode(top).unwrap().size(), size);
        assert_eq!(list(&mut fs, top).unwrap().len(), 2 + 2000 + 1000);
        fs.unmount().unwrap();
        assert_clean(&img);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn links_symlinks_renames_and_deletes() {
    need_tools!();
    for bs in [1024, 4096] {
        let d = scratch("ns");
        let img = mkimage(&d, bs, 8 * 1024, None, &[]);
        let mut fs = mount(&img);
        let a = fs.create(ROOT_INO, b"a", dir(0o755)).unwrap();
        let b = fs.create(ROOT_INO, b"b", dir(0o755)).unwrap();
        let a1 = fs.create(a, b"a1", dir(0o700)).unwrap();
        assert_eq!(fs.inode(ROOT_INO).unwrap().links(), 5);
        assert_eq!(fs.inode(a).unwrap().links(), 3);
        let f = fs.create(a1, b"f", reg(0o644)).unwrap();
        fs.write(f, 0, b"data").unwrap();
        fs.link(b, b"f-link", f).unwrap();
        fs.link(ROOT_INO, b"f-root", f).unwrap();
        assert_eq!(fs.inode(f).unwrap().links(), 3);
        assert_eq!(fs.link(b, b"f-link", f), Err(Error::Exists));
        assert_eq!(fs.link(b, b"dirlink", a), Err(Error::Invalid));
        let s1 = fs.symlink(b, b"short", b"../a/a1/f", 0, 0).unwrap();
        let long = vec![b'y'; 200];
        let s2 = fs.symlink(b, b"long", &long, 0, 0).unwrap();
        assert_eq!(fs.read_link(s1).unwrap(), b"../a/a1/f");
        assert_eq!(fs.read_link(s2).unwrap(), long);
        let fifo = NewInode {
            kind: FileKind::Fifo,
            perm: 0o644,
            uid: 0,
            gid: 0,
        };
        fs.create(b, b"fifo", fifo).unwrap();
        let cdev = NewInode {
            kind: FileKind::CharDev { major: 1, minor: 3 },
            perm: 0o666,
            uid: 0,
            gid: 0,
        };
        let c = fs.create(b, b"null", cdev).unwrap();
        let bdev = NewInode {
            kind: FileKind::BlockDev {
                major: 259,
                minor: 70000,
            },
            perm: 0o660,
            uid: 0,
            gid: 6,
        };
        let bd = fs.create(b, b"blk", bdev).unwrap();
        assert_eq!(
            fs.inode(c).unwrap().kind(),
            Some(FileKind::CharDev { major: 1, minor: 3 })
        );
        assert_eq!(
            fs.inode(bd).unwrap().kind(),
            Some(FileKind::BlockDev {
                major: 259,
                minor: 70000
            })
        );

        // Move a directory across parents: `..` and link counts follow.
        fs.rename(a, b"a1", b, b"moved", false).unwrap();
        assert_eq!(fs.inode(a).unwrap().links(), 2);
        assert_eq!(fs.inode(b).unwrap().links(), 3);
        assert_eq!(fs.lookup(a1, b"..").unwrap(), b);
        assert_eq!(
            fs.rename(ROOT_INO, b"b", a1, b"inside", false),
            Err(Error::Invalid)
        );
        // Rename over an existing file drops the victim.
        let v = fs.create(ROOT_INO, b"victim", reg(0o644)).unwrap();
        let replaced = fs.rename(b, b"f-link", ROOT_INO, b"victim", false).unwrap();
        assert_eq!(replaced, Some((v, 0)));
        fs.evict(v).unwrap();
        assert_eq!(fs.lookup(ROOT_INO, b"victim").unwrap(), f);
        // A directory over an empty directory, across parents.
        let e = fs.create(a, b"empty", dir(0o755)).unwrap();
        fs.rename(b, b"moved", a, b"empty", false).unwrap();
        fs.evict(e).unwrap();
        assert_eq!(fs.inode(a).unwrap().links(), 3);
        assert_eq!(fs.inode(b).unwrap().links(), 2);
        // Same-directory rename, and a noreplace refusal.
        fs.rename(ROOT_INO, b"f-root", ROOT_INO, b"f-root2", false)
            .unwrap();
        assert_eq!(
            fs.rename(ROOT_INO, b"f-root2", ROOT_INO, b"victim", true),
            Err(Error::Exists)
        );
        assert_eq!(fs.rmdir(ROOT_INO, b"a"), Err(Error::NotEmpty));
        assert_eq!(fs.unlink(ROOT_INO, b"a"), Err(Error::IsDir));
        // Deletes.
        let (ino, n) = fs.unlink(ROOT_INO, b"f-root2").unwrap();
        assert_eq!((ino, n), (f, 2));
        let (_, n) = fs.unlink(ROOT_INO, b"victim").unwrap();
        assert_eq!(n, 1);
        assert_eq!(fs.lookup(a, b"empty").unwrap(), a1);
        assert_eq!(fs.unlink(a1, b"f").unwrap(), (f, 0));
        fs.evict(f).unwrap();
        let (s, _) = fs.unlink(b, b"long").unwrap();
        fs.evict(s).unwrap();
        fs.unmount().unwrap();
        drop(fs);
        assert_clean(&img);
        let stat = String::from_utf8_lossy(&debugfs(&img, "stat /b/blk")).into_owned();
        assert!(
            stat.contains("Device major/minor number: 259:70000"),
            "{stat}"
        );
        let stat = String::from_utf8_lossy(&debugfs(&img, "stat /b/null")).into_owned();
        assert!(stat.contains("Device major/minor number: 01:03"), "{stat}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn mount_marks_not_clean_and_unmount_marks_clean() {
    need_tools!();
    let d = scratch("state");
    let img = mkimage(&d, 1024, 4096, None, &[]);
    let mut fs = mount(&img);
    let state = debugfs(&img, "stats");
    assert!(String::from_utf8_lossy(&state).contains("Filesystem state:         not clean"));
    let st = fs.statfs();
    assert_eq!(st.block_size, 1024);
    assert!(st.free_blocks > 3000 && st.free_blocks < st.blocks);
    fs.unmount().unwrap();
    let state = debugfs(&img, "stats");
    assert!(String::from_utf8_lossy(&state).contains("Filesystem state:         clean"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn unknown_features_refuse_or_force_read_only() {
    need_tools!();
    let d = scratch("feat");
    let img = mkimage(&d, 1024, 4096, None, &[]);
    let mut raw = std::fs::read(&img).unwrap();
    raw[1024 + 96] |= 0x40; // INCOMPAT_EXTENTS
    let dev = MemDev(std::cell::RefCell::new(raw.clone()));
    assert!(matches!(Fs::mount(dev, rw()), Err(Error::Unsupported(_))));
    raw[1024 + 96] &= !0x40;
    raw[1024 + 100] |= 0x40; // RO_COMPAT_EXTRA_ISIZE
    let dev = MemDev(std::cell::RefCell::new(raw));
    let mut fs = Fs::mount(dev, rw()).unwrap();
    assert!(fs.is_read_only());
    assert_eq!(fs.create(ROOT_INO, b"x", reg(0o644)), Err(Error::ReadOnly));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn revision_0_reads_and_writes() {
    need_tools!();
    let d = scratch("rev0");
    let src = d.join("src");
    populate_host_tree(&src);
    let img = mkimage(&d, 1024, 16 * 1024, Some(&src), &["-r", "0"]);
    let mut fs = mount(&img);
    check_host_tree(&mut fs);
    let f = fs.create(ROOT_INO, b"new", reg(0o644)).unwrap();
    fs.write(f, 0, b"rev0 data").unwrap();
    assert_eq!(fs.write(f, 1 << 31, b"x"), Err(Error::FileTooBig));
    fs.unmount().unwrap();
    assert_clean(&img);
    assert_eq!(debugfs(&img, "cat /new"), b"rev0 data");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn damage_applies_the_errors_policy() {
    need_tools!();
    let d = scratch("errors");
    let img = mkimage(&d, 1024, 4096, None, &[]);
    let mut fs = mount(&img);
    let sub = fs.create(ROOT_INO, b"sub", dir(0o755)).unwrap();
    let blk = fs.bmap(sub, 0).unwrap().unwrap();
    fs.unmount().unwrap();
    drop(fs);
    // Break the rec_len of `.` in sub's first block.
    let dev = open(&img);
    ext2::BlockIo::write(&dev, blk * 1024 + 4, &[3, 0]).unwrap();
    drop(dev);
    for (policy, ro) in [
        (ext2::ErrorsPolicy::Continue, false),
        (ext2::ErrorsPolicy::RemountRo, true),
        (ext2::ErrorsPolicy::Panic, true),
    ] {
        let mut opts = rw();
        opts.errors = Some(policy);
        let mut fs = Fs::mount(open(&img), opts).unwrap();
        assert!(matches!(fs.lookup(sub, b"x"), Err(Error::Corrupt(_))));
        assert_eq!(Error::Corrupt("").errno(false), 5);
        assert!(fs.has_errors());
        assert_eq!(fs.is_read_only(), ro, "{policy:?}");
        fs.unmount().unwrap();
    }
    let state = debugfs(&img, "stats");
    assert!(
        String::from_utf8_lossy(&state).contains("with errors"),
        "{}",
        String::from_utf8_lossy(&state)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The name cache never answers differently from the disk: a random mix
/// of lookups (hits and misses), creations, unlinks, renames over existing
/// names, rmdir and mkdir (inode numbers reused) checked after every step
/// against a model, and at the end against a fresh mount (no cache).
#[test]
fn name_cache_answers_as_the_disk_does() {
    need_tools!();
    use std::collections::BTreeMap;
    let d = scratch("namecache");
    let img = mkimage(&d, 1024, 4096, None, &["-N", "256"]);
    let mut fs = mount(&img);
    let a = fs.create(ROOT_INO, b"a", dir(0o755)).unwrap();
    let b = fs.create(ROOT_INO, b"b", dir(0o755)).unwrap();
    // Model: (dir, name) -> inode, for the files in a and b.
    let mut model: BTreeMap<(u32, Vec<u8>), u32> = BTreeMap::new();
    let mut rng = Rng(0x5eed);
    let mut sub: Option<u32> = None;
    for step in 0..3000 {
        let dirs = [a, b];
        let dd = dirs[rng.below(2) as usize];
        let name = format!("f{}", rng.below(12)).into_bytes();
        let key = (dd, name.clone());
        match rng.below(7) {
            0 | 1 => {
                let r = fs.lookup(dd, &name);
                match model.get(&key) {
                    Some(&ino) => assert_eq!(r.unwrap(), ino, "step {step}"),
                    None => assert!(matches!(r, Err(Error::NotFound)), "step {step}"),
                }
            }
            2 => {
                let r = fs.create(dd, &name, reg(0o644));
                match model.entry(key) {
                    std::collections::btree_map::Entry::Occupied(_) => {
                        assert!(matches!(r, Err(Error::Exists)), "step {step}")
                    }
                    std::collections::btree_map::Entry::Vacant(v) => {
                        v.insert(r.unwrap());
                    }
                }
            }
            3 => {
                let r = fs.unlink(dd, &name);
                match model.remove(&key) {
                    Some(ino) => {
                        let (got, links) = r.unwrap();
                        assert_eq!(got, ino);
                        if links == 0 {
                            fs.evict(ino).unwrap();
                        }
                    }
                    None => assert!(matches!(r, Err(Error::NotFound)), "step {step}"),
                }
            }
            4 => {
                // Rename over whatever the target name holds.
                let to_dir = dirs[rng.below(2) as usize];
                let to = format!("f{}", rng.below(12)).into_bytes();
                let r = fs.rename(dd, &name, to_dir, &to, false);
                match model.remove(&key) {
                    Some(ino) => {
                        let replaced = r.unwrap();
                        let old = model.insert((to_dir, to.clone()), ino);
                        if (dd, &name) == (to_dir, &to) {
                            assert_eq!(replaced, None);
                        } else if old == Some(ino) {
                            // Two links of one file: rename(2) does nothing.
                            assert_eq!(replaced, None);
                            model.insert(key, ino);
                        } else if let Some(old) = old {
                            let (victim, links) = replaced.unwrap();
                            assert_eq!(victim, old);
                            if links == 0 {
                                fs.evict(victim).unwrap();
                            }
                        }
                    }
                    None => assert!(r.is_err(), "step {step}"),
                }
            }
            5 => {
                let to_dir = dirs[rng.below(2) as usize];
                let to = format!("f{}", rng.below(12)).into_bytes();
                let r = fs.link(to_dir, &to, model.get(&key).copied().unwrap_or(0));
                match (
                    model.get(&key).copied(),
                    model.contains_key(&(to_dir, to.clone())),
                ) {
                    (Some(ino), false) => {
                        r.unwrap();
                        model.insert((to_dir, to), ino);
                    }
                    _ => assert!(r.is_err(), "step {step}"),
                }
            }
            _ => {
                // A subdirectory removed and made again (its number is
                // reused): no name it had may be seen in the new one.
                match sub.take() {
                    Some(s) => {
                        let _ = fs.lookup(s, b"x");
                        let (x, _) = fs.unlink(s, b"x").unwrap();
                        fs.evict(x).unwrap();
                        let r = fs.rmdir(a, b"sub").unwrap();
                        assert_eq!(r, s);
                        fs.evict(s).unwrap();
                        assert!(matches!(fs.lookup(a, b"sub"), Err(Error::NotFound)));
                    }
                    None => {
                        let s = fs.create(a, b"sub", dir(0o755)).unwrap();
                        assert!(matches!(fs.lookup(s, b"x"), Err(Error::NotFound)));
                        fs.create(s, b"x", reg(0o600)).unwrap();
                        assert!(fs.lookup(s, b"x").is_ok());
                        sub = Some(s);
                    }
                }
            }
        }
    }
    fs.unmount().unwrap();
    assert_clean(&img);
    let mut fresh = mount(&img);
    for dd in [a, b] {
        for i in 0..12 {
            let name = format!("f{i}").into_bytes();
            let got = fresh.lookup(dd, &name).ok();
            assert_eq!(got, model.get(&(dd, name)).copied());
        }
    }
    fresh.unmount().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Adding after removals in the same blocks (the add search's slot must
/// not survive a removal), with names that grow each round, in a directory
/// this `Fs` made (complete in the name cache): every answer matches a
/// model, the listing too, and e2fsck finds the image clean.
#[test]
fn churn_in_a_new_directory_is_clean_under_e2fsck() {
    need_tools!();
    use std::collections::BTreeMap;
    for bs in [1024, 4096] {
        let d = scratch("churn");
        let img = mkimage(&d, bs, 16 * 1024, None, &[]);
        let mut fs = mount(&img);
        let top = fs.create(ROOT_INO, b"churn", dir(0o755)).unwrap();
        let mut model: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
        let mut rng = Rng(7);
        for round in 0..6 {
            for i in 0..150 {
                // Longer names each round: the first addition after the
                // removals may start at the last one's slot.
                let name = format!("{i:0w$}", w = 2 + round * 3).into_bytes();
                match fs.create(top, &name, reg(0o644)) {
                    Ok(ino) => {
                        assert!(model.insert(name, ino).is_none(), "round {round} {i}");
                    }
                    Err(Error::Exists) => assert!(model.contains_key(&name)),
                    Err(e) => panic!("create: {e:?}"),
                }
            }
            // Remove about half, scattered, then look every name up.
            let names: Vec<Vec<u8>> = model.keys().cloned().collect();
            for name in names {
                if rng.below(2) == 0 {
                    let ino = model.remove(&name).unwrap();
                    let (got, links) = fs.unlink(top, &name).unwrap();
                    assert_eq!((got, links), (ino, 0));
                    fs.evict(ino).unwrap();
                    assert_eq!(fs.lookup(top, &name), Err(Error::NotFound));
                }
            }
            for (name, &ino) in &model {
                assert_eq!(fs.lookup(top, name).unwrap(), ino);
            }
        }
        let mut listed: Vec<Vec<u8>> = list(&mut fs, top)
            .unwrap()
            .into_iter()
            .map(|e| e.0)
            .filter(|n| n != b"." && n != b"..")
            .collect();
        listed.sort();
        let want: Vec<Vec<u8>> = model.keys().cloned().collect();
        assert_eq!(listed, want);
        fs.unmount().unwrap();
        drop(fs);
        assert_clean(&img);
        // A fresh mount (empty cache) finds the same names.
        let mut fs = mount(&img);
        for (name, &ino) in &model {
            assert_eq!(fs.lookup(top, name).unwrap(), ino);
        }
        fs.unmount().unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// 256-byte inodes: this crate reads and writes only the first 128 bytes
/// of an inode (and keeps copies of them), so the extra fields mke2fs
/// wrote must survive a change of the inode, a reused inode must get its
/// extra bytes zeroed, and the result must be clean.
#[test]
fn large_inodes_keep_their_extra_fields_and_stay_clean() {
    need_tools!();
    let d = scratch("bigino");
    let src = d.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("keep"), b"kept\n").unwrap();
    let img = mkimage(&d, 1024, 8 * 1024, Some(&src), &["-I", "256"]);
    let extra = |img: &std::path::Path| -> Vec<String> {
        String::from_utf8_lossy(&debugfs(img, "stat /keep"))
            .lines()
            .filter(|l| l.contains("crtime") || l.contains("extra inode fields"))
            .map(String::from)
            .collect()
    };
    let before = extra(&img);
    assert_eq!(before.len(), 2, "mke2fs wrote no extra fields: {before:?}");
    let mut fs = mount(&img);
    let keep = fs.lookup(ROOT_INO, b"keep").unwrap();
    let attr = ext2::SetAttr {
        perm: Some(0o600),
        ctime: Some(now()),
        ..Default::default()
    };
    fs.set_attr(keep, attr).unwrap();
    // Inodes freed and handed out again, through the inode copies.
    let top = fs.create(ROOT_INO, b"d", dir(0o755)).unwrap();
    let mut inos = Vec::new();
    for i in 0..40 {
        inos.push(fs.create(top, format!("f{i}").as_bytes(), reg(0o644)).unwrap());
    }
    for i in (0..40).step_by(2) {
        let (ino, links) = fs.unlink(top, format!("f{i}").as_bytes()).unwrap();
        assert_eq!((ino, links), (inos[i], 0));
        fs.evict(ino).unwrap();
    }
    for i in 40..60 {
        let ino = fs.create(top, format!("f{i}").as_bytes(), reg(0o644)).unwrap();
        assert_eq!(fs.inode(ino).unwrap().links(), 1);
    }
    assert_eq!(fs.inode(keep).unwrap().mode() & 0o7777, 0o600);
    fs.unmount().unwrap();
    drop(fs);
    assert_clean(&img);
    assert_eq!(extra(&img), before);
    let stat = String::from_utf8_lossy(&debugfs(&img, "stat /keep")).into_owned();
    assert!(stat.contains("Mode:  0600"), "{stat}");
    let _ = std::fs::remove_dir_all(&d);
}
