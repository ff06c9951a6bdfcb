//! `struct stat`, `struct statx` and `struct statfs` as the x86-64 Linux
//! ABI lays them out, filled from inode metadata.

use core::mem::size_of;

use super::inode::{Metadata, Timespec, dev_major, dev_minor};

frame::pod_struct! {
    /// `struct stat` (arch/x86/include/uapi/asm/stat.h, 64-bit).
    pub struct Stat {
        pub st_dev: u64,
        pub st_ino: u64,
        pub st_nlink: u64,
        pub st_mode: u32,
        pub st_uid: u32,
        pub st_gid: u32,
        pub pad0: u32,
        pub st_rdev: u64,
        pub st_size: i64,
        pub st_blksize: i64,
        pub st_blocks: i64,
        pub st_atime: i64,
        pub st_atime_nsec: i64,
        pub st_mtime: i64,
        pub st_mtime_nsec: i64,
        pub st_ctime: i64,
        pub st_ctime_nsec: i64,
        pub unused: [i64; 3],
    }
}
const _: () = assert!(size_of::<Stat>() == 144);

frame::pod_struct! {
    pub struct StatxTimestamp {
        pub tv_sec: i64,
        pub tv_nsec: u32,
        pub reserved: i32,
    }
}

frame::pod_struct! {
    /// `struct statx` (include/uapi/linux/stat.h).
    pub struct Statx {
        pub stx_mask: u32,
        pub stx_blksize: u32,
        pub stx_attributes: u64,
        pub stx_nlink: u32,
        pub stx_uid: u32,
        pub stx_gid: u32,
        pub stx_mode: u16,
        pub spare0: u16,
        pub stx_ino: u64,
        pub stx_size: u64,
        pub stx_blocks: u64,
        pub stx_attributes_mask: u64,
        pub stx_atime: StatxTimestamp,
        pub stx_btime: StatxTimestamp,
        pub stx_ctime: StatxTimestamp,
        pub stx_mtime: StatxTimestamp,
        pub stx_rdev_major: u32,
        pub stx_rdev_minor: u32,
        pub stx_dev_major: u32,
        pub stx_dev_minor: u32,
        pub stx_mnt_id: u64,
        pub stx_dio_mem_align: u32,
        pub stx_dio_offset_align: u32,
        pub spare: [u64; 12],
    }
}
const _: () = assert!(size_of::<Statx>() == 256);

frame::pod_struct! {
    /// `struct statfs` (64-bit).
    pub struct StatFs {
        pub f_type: i64,
        pub f_bsize: i64,
        pub f_blocks: u64,
        pub f_bfree: u64,
        pub f_bavail: u64,
        pub f_files: u64,
        pub f_ffree: u64,
        pub f_fsid: [i32; 2],
        pub f_namelen: i64,
        pub f_frsize: i64,
        pub f_flags: i64,
        pub f_spare: [i64; 4],
    }
}
const _: () = assert!(size_of::<StatFs>() == 120);

/// statx mask bits.
pub const STATX_BASIC_STATS: u32 = 0x7ff;
pub const STATX_MNT_ID: u32 = 0x1000;
pub const STATX_RESERVED: u32 = 0x8000_0000;

impl Stat {
    pub fn from_metadata(m: &Metadata) -> Stat {
        Stat {
            st_dev: m.dev,
            st_ino: m.ino,
            st_nlink: u64::from(m.nlink),
            st_mode: m.mode(),
            st_uid: m.uid,
            st_gid: m.gid,
            pad0: 0,
            st_rdev: m.rdev,
            st_size: m.size as i64,
            st_blksize: i64::from(m.blksize),
            st_blocks: m.blocks as i64,
            st_atime: m.atime.sec,
            st_atime_nsec: i64::from(m.atime.nsec),
            st_mtime: m.mtime.sec,
            st_mtime_nsec: i64::from(m.mtime.nsec),
            st_ctime: m.ctime.sec,
            st_ctime_nsec: i64::from(m.ctime.nsec),
            unused: [0; 3],
        }
    }
}

fn timestamp(t: Timespec) -> StatxTimestamp {
    StatxTimestamp {
        tv_sec: t.sec,
        tv_nsec: t.nsec,
        reserved: 0,
    }
}

impl Statx {
    /// Every basic field is filled whatever was asked for (statx(2) allows
    /// returning more than requested); there is no birth time.
    pub fn from_metadata(m: &Metadata) -> Statx {
        Statx {
            stx_mask: STATX_BASIC_STATS | STATX_MNT_ID,
            stx_blksize: m.blksize,
            stx_attributes: 0,
            stx_nlink: m.nlink,
            stx_uid: m.uid,
            stx_gid: m.gid,
            stx_mode: m.mode() as u16,
            spare0: 0,
            stx_ino: m.ino,
            stx_size: m.size,
            stx_blocks: m.blocks,
            stx_attributes_mask: 0,
            stx_atime: timestamp(m.atime),
            stx_btime: timestamp(Timespec::default()),
            stx_ctime: timestamp(m.ctime),
            stx_mtime: timestamp(m.mtime),
            stx_rdev_major: dev_major(m.rdev),
            stx_rdev_minor: dev_minor(m.rdev),
            stx_dev_major: dev_major(m.dev),
            stx_dev_minor: dev_minor(m.dev),
            stx_mnt_id: 1,
            stx_dio_mem_align: 0,
            stx_dio_offset_align: 0,
            spare: [0; 12],
        }
    }
}

/// statfs(2) `f_type` values (linux/magic.h).
pub const TMPFS_MAGIC: i64 = 0x0102_1994;
pub const RAMFS_MAGIC: i64 = 0x8584_58f6;
pub const PROC_SUPER_MAGIC: i64 = 0x9fa0;
pub const SYSFS_MAGIC: i64 = 0x6265_6572;
pub const DEVPTS_SUPER_MAGIC: i64 = 0x1cd1;
pub const PIPEFS_MAGIC: i64 = 0x5049_5045;
pub const SOCKFS_MAGIC: i64 = 0x534f_434b;
pub const ANON_INODE_FS_MAGIC: i64 = 0x0904_1934;

/// statfs(2) `f_flags`: the flags are valid; atime is updated relatime-style.
const ST_VALID: i64 = 0x20;
const ST_NOSUID: i64 = 2;
const ST_NODEV: i64 = 4;
const ST_NOEXEC: i64 = 8;
const ST_RELATIME: i64 = 4096;

impl StatFs {
    /// What statfs(2) reports for a file system of type `fstype` on device
    /// `dev`. The in-memory file systems share one page budget (half of
    /// memory, like tmpfs's default size), which they report as their
    /// size; devtmpfs is a tmpfs to statfs, as on Linux; plain ramfs and
    /// the synthetic file systems report no blocks. `mount_flags` (ST_*)
    /// are a mounted file system's; the others get their type's usual ones.
    /// `usage` is the instance's own (pages used, page limit, inodes,
    /// inode limit) where it has limits (tmpfs `size=`, `nr_inodes=`).
    pub fn for_fs(
        fstype: &str,
        dev: u64,
        mount_flags: Option<u32>,
        usage: Option<super::ramfs::Usage>,
    ) -> StatFs {
        let (global_used, global_limit) = super::ramfs::page_usage();
        let global_limit = global_limit.min(frame::boot::total_ram() / 4096);
        // An instance without a limit (size=0, nr_inodes=0) reports zeros,
        // as Linux's tmpfs does.
        let limited = |used: usize, max: usize| {
            if max == usize::MAX { (0, 0) } else { (max as u64, max.saturating_sub(used) as u64) }
        };
        // All instances also share the global budget: the free blocks
        // are those a write can still get.
        let global_free = global_limit.saturating_sub(global_used) as u64;
        let ((limit, free), (files, ffree)) = match &usage {
            Some(u) => {
                let (limit, free) = limited(u.pages, u.max_pages);
                ((limit, free.min(global_free)), limited(u.inodes, u.max_inodes))
            }
            None => {
                let free = global_limit.saturating_sub(global_used) as u64;
                ((global_limit as u64, free), (global_limit as u64, free))
            }
        };
        let (f_type, sized, flags) = match fstype {
            "proc" => (PROC_SUPER_MAGIC, false, ST_NOSUID | ST_NODEV | ST_NOEXEC),
            "sysfs" => (SYSFS_MAGIC, false, ST_NOSUID | ST_NODEV | ST_NOEXEC),
            "devpts" => (DEVPTS_SUPER_MAGIC, false, ST_NOSUID | ST_NOEXEC),
            "pipefs" => (PIPEFS_MAGIC, false, 0),
            "sockfs" => (SOCKFS_MAGIC, false, 0),
            "anon_inodefs" => (ANON_INODE_FS_MAGIC, false, 0),
            "ramfs" => (RAMFS_MAGIC, false, 0),
            "devtmpfs" => (TMPFS_MAGIC, true, ST_NOSUID),
            _ => (TMPFS_MAGIC, true, 0),
        };
        let flags = match mount_flags {
            Some(f) => i64::from(f),
            None => ST_RELATIME | flags,
        };
        let (blocks, bfree) = if sized { (limit, free) } else { (0, 0) };
        let (files, ffree) = if sized { (files, ffree) } else { (0, 0) };
        // Linux's fsid of a device-less file system is its device number
        // (huge_encode_dev) split into two words.
        let enc = (u64::from(dev_minor(dev)) & 0xff)
            | (u64::from(dev_major(dev)) << 8)
            | ((u64::from(dev_minor(dev)) & !0xff) << 12);
        StatFs {
            f_type,
            f_bsize: 4096,
            f_blocks: blocks,
            f_bfree: bfree,
            f_bavail: bfree,
            f_files: files,
            f_ffree: ffree,
            f_fsid: [enc as u32 as i32, (enc >> 32) as u32 as i32],
            f_namelen: 255,
            f_frsize: 4096,
            f_flags: ST_VALID | flags,
            f_spare: [0; 4],
        }
    }
}
