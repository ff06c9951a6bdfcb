//! The run forms of the block map (`bmap_run`, `bmap_alloc_range`) agree
//! with the per-block ones (`bmap`, `bmap_alloc`) across the direct,
//! single and double indirect parts, holes included, and leave an image
//! e2fsck finds clean.

mod common;

use common::*;
use ext2::{FileKind, NewInode, ROOT_INO};

#[test]
fn block_runs_agree_with_single_block_lookups_and_allocations() {
    if !have_e2fsprogs() {
        eprintln!("SKIP: e2fsprogs not installed");
        return;
    }
    for bs in [1024u64, 4096] {
        let d = scratch("runs");
        let img = mkimage(&d, bs as u32, 64 * 1024, None, &[]);
        let mut fs = mount(&img);
        let ino = fs
            .create(
                ROOT_INO,
                b"f",
                NewInode {
                    kind: FileKind::Regular,
                    perm: 0o644,
                    uid: 0,
                    gid: 0,
                },
            )
            .unwrap();
        let ptrs = bs / 4;
        // Blocks written one at a time, leaving holes: in the direct part,
        // in the single indirect block and in the double indirect tree
        // (across a leaf boundary); one leaf of the double tree stays a hole.
        let double = 12 + ptrs;
        let data: Vec<u64> = vec![
            0,
            3,
            11,
            12,
            13,
            12 + ptrs - 1,
            double,
            double + 5,
            double + ptrs + 1,
        ];
        for &l in &data {
            fs.write(ino, l * bs, &[l as u8 | 1; 100]).unwrap();
        }
        let end = double + 3 * ptrs;
        let mut run = vec![None; end as usize];
        fs.bmap_run(ino, 0, &mut run).unwrap();
        for (l, got) in run.iter().enumerate() {
            let want = fs.bmap(ino, l as u64).unwrap();
            assert_eq!(*got, want, "bmap_run at {l} (bs {bs})");
            assert_eq!(
                got.is_some(),
                data.contains(&(l as u64)),
                "block {l} (bs {bs})"
            );
        }
        // A run starting part way, in the double tree.
        let mut part = vec![None; 7];
        fs.bmap_run(ino, double + 2, &mut part).unwrap();
        assert_eq!(part[3], fs.bmap(ino, double + 5).unwrap());
        assert!(part[3].is_some() && part.iter().filter(|b| b.is_some()).count() == 1);

        // Mapped blocks only: nothing is allocated.
        let free0 = fs.statfs().free_blocks;
        fs.bmap_alloc_range(ino, 12, 13).unwrap();
        assert_eq!(fs.statfs().free_blocks, free0);
        assert_eq!(fs.bmap(ino, 12).unwrap(), run[12]);

        // Fill every hole up to past the double tree's second leaf.
        let last = double + ptrs + 4;
        fs.bmap_alloc_range(ino, 0, last).unwrap();
        let mut after = vec![None; last as usize + 1];
        fs.bmap_run(ino, 0, &mut after).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for (l, b) in after.iter().enumerate() {
            let b = b.unwrap_or_else(|| panic!("block {l} still a hole (bs {bs})"));
            assert_eq!(Some(b), fs.bmap(ino, l as u64).unwrap());
            assert!(seen.insert(b), "block {b} mapped twice (bs {bs})");
            if data.contains(&(l as u64)) {
                assert_eq!(Some(b), run[l], "a mapped block moved (bs {bs})");
            }
        }
        assert!(fs.bmap(ino, last + 1).unwrap().is_none());
        // The data written before is still there.
        for &l in &data {
            let mut buf = [0u8; 100];
            fs.read(ino, l * bs, &mut buf).unwrap();
            assert!(
                buf.iter().all(|&x| x == l as u8 | 1),
                "data of {l} (bs {bs})"
            );
        }
        // i_blocks and the bitmaps must agree with the map: e2fsck checks.
        fs.set_size(ino, (last + 1) * bs).unwrap();
        fs.unmount().unwrap();
        drop(fs);
        assert_clean(&img);
        let _ = std::fs::remove_dir_all(&d);
    }
}
