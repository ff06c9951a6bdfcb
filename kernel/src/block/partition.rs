//! Partition tables: MBR (primary entries and the logical partitions of an
//! extended one) and GPT (UEFI spec 2.10 §5.3: header CRC and entry-array
//! CRC checked, behind a protective MBR).
//!
//! The table comes from the disk, so nothing in it is trusted: an entry
//! that starts or ends past the disk is ignored (as Linux's
//! `check_partition` callers do), chains of extended partitions are
//! bounded, and no arithmetic can overflow.

use alloc::vec;
use alloc::vec::Vec;

use crate::error::Result;

/// One partition found in a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// 1-based (MBR: 1..4 primary, 5.. logical; GPT: entry index + 1).
    pub number: u32,
    pub start: u64,
    pub sectors: u64,
}

const SECTOR: usize = 512;
/// MBR partition types.
const TYPE_EMPTY: u8 = 0;
const TYPE_EXTENDED_CHS: u8 = 0x05;
const TYPE_EXTENDED_LBA: u8 = 0x0f;
const TYPE_EXTENDED_LINUX: u8 = 0x85;
const TYPE_GPT_PROTECTIVE: u8 = 0xee;
/// Logical partitions followed in an extended chain (Linux stops at its
/// minor limit; a looping chain must end).
const MAX_LOGICAL: u32 = 64;
/// GPT entries looked at, at most (the spec's minimum array is 128).
const MAX_GPT_ENTRIES: u32 = 256;

/// Reads the partition table of a disk of `capacity` sectors through
/// `read(sector, buf)`. No table, or an unreadable one: no partitions.
pub fn read_table(capacity: u64, read: &dyn Fn(u64, &mut [u8]) -> Result<()>) -> Vec<Partition> {
    let mut mbr = [0u8; SECTOR];
    if capacity == 0 || read(0, &mut mbr).is_err() || mbr[510] != 0x55 || mbr[511] != 0xaa {
        return Vec::new();
    }
    let entries = mbr_entries(&mbr);
    if entries.iter().any(|e| e.kind == TYPE_GPT_PROTECTIVE) {
        if let Some(parts) = read_gpt(capacity, read) {
            return parts;
        }
        // A bad GPT behind a protective MBR: Linux finds no partitions.
        return Vec::new();
    }
    let mut parts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.kind == TYPE_EMPTY || e.sectors == 0 {
            continue;
        }
        let number = i as u32 + 1;
        if is_extended(e.kind) {
            // Linux shows the extended partition itself as a 1 KiB (2 sector) device.
            if fits(capacity, e.start, 2) {
                parts.push(Partition {
                    number,
                    start: e.start,
                    sectors: 2.min(e.sectors),
                });
                read_logical(capacity, e.start, e.sectors, read, &mut parts);
            }
            continue;
        }
        if fits(capacity, e.start, e.sectors) {
            parts.push(Partition {
                number,
                start: e.start,
                sectors: e.sectors,
            });
        }
    }
    parts
}

fn fits(capacity: u64, start: u64, sectors: u64) -> bool {
    start > 0
        && sectors > 0
        && start
            .checked_add(sectors)
            .is_some_and(|end| end <= capacity)
}

fn is_extended(kind: u8) -> bool {
    matches!(
        kind,
        TYPE_EXTENDED_CHS | TYPE_EXTENDED_LBA | TYPE_EXTENDED_LINUX
    )
}

#[derive(Clone, Copy, Debug)]
struct MbrEntry {
    kind: u8,
    start: u64,
    sectors: u64,
}

fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | (u64::from(le32(b, at + 4)) << 32)
}

fn mbr_entries(mbr: &[u8]) -> [MbrEntry; 4] {
    core::array::from_fn(|i| {
        let at = 446 + i * 16;
        MbrEntry {
            kind: mbr[at + 4],
            start: u64::from(le32(mbr, at + 8)),
            sectors: u64::from(le32(mbr, at + 12)),
        }
    })
}

/// Logical partitions: a chain of extended boot records, each holding one
/// logical partition (relative to that EBR) and a link to the next EBR
/// (relative to the extended partition's start).
fn read_logical(
    capacity: u64,
    ext_start: u64,
    ext_sectors: u64,
    read: &dyn Fn(u64, &mut [u8]) -> Result<()>,
    parts: &mut Vec<Partition>,
) {
    let ext_end = ext_start.saturating_add(ext_sectors).min(capacity);
    let mut ebr = ext_start;
    let mut number = 5;
    let mut seen = Vec::new();
    for _ in 0..MAX_LOGICAL {
        if ebr >= ext_end || seen.contains(&ebr) {
            return;
        }
        seen.push(ebr);
        let mut buf = [0u8; SECTOR];
        if read(ebr, &mut buf).is_err() || buf[510] != 0x55 || buf[511] != 0xaa {
            return;
        }
        let e = mbr_entries(&buf);
        let data = e[0];
        if data.kind != TYPE_EMPTY && data.sectors != 0 {
            let start = ebr.saturating_add(data.start);
            if fits(capacity, start, data.sectors) && start.saturating_add(data.sectors) <= ext_end
            {
                parts.push(Partition {
                    number,
                    start,
                    sectors: data.sectors,
                });
            }
            number += 1;
        }
        let link = e[1];
        if !is_extended(link.kind) || link.start == 0 {
            return;
        }
        ebr = match ext_start.checked_add(link.start) {
            Some(n) => n,
            None => return,
        };
    }
}

/// CRC-32 (IEEE 802.3, reflected, as GPT uses).
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The GPT at LBA 1 (the backup at the last sector if the primary is
/// bad), or None if neither is valid.
fn read_gpt(capacity: u64, read: &dyn Fn(u64, &mut [u8]) -> Result<()>) -> Option<Vec<Partition>> {
    gpt_at(capacity, 1, read).or_else(|| gpt_at(capacity, capacity.checked_sub(1)?, read))
}

fn gpt_at(
    capacity: u64,
    lba: u64,
    read: &dyn Fn(u64, &mut [u8]) -> Result<()>,
) -> Option<Vec<Partition>> {
    let mut hdr = [0u8; SECTOR];
    read(lba, &mut hdr).ok()?;
    if &hdr[0..8] != b"EFI PART" {
        return None;
    }
    let hdr_size = le32(&hdr, 12) as usize;
    if !(92..=SECTOR).contains(&hdr_size) {
        return None;
    }
    let mut copy = hdr;
    copy[16..20].fill(0);
    if crc32(&copy[..hdr_size]) != le32(&hdr, 16) {
        return None;
    }
    if le64(&hdr, 24) != lba {
        return None;
    }
    let first_usable = le64(&hdr, 40);
    let last_usable = le64(&hdr, 48);
    let entries_lba = le64(&hdr, 72);
    let count = le32(&hdr, 80);
    let entry_size = le32(&hdr, 84) as usize;
    let entries_crc = le32(&hdr, 88);
    if !(128..=SECTOR).contains(&entry_size) || !SECTOR.is_multiple_of(entry_size) || count == 0 {
        return None;
    }
    if count > MAX_GPT_ENTRIES || last_usable >= capacity || first_usable > last_usable {
        return None;
    }
    let bytes = count as usize * entry_size;
    let array_sectors = bytes.div_ceil(SECTOR) as u64;
    if entries_lba
        .checked_add(array_sectors)
        .is_none_or(|e| e > capacity)
    {
        return None;
    }
    let mut array = vec![0u8; array_sectors as usize * SECTOR];
    for (i, chunk) in array.chunks_mut(SECTOR).enumerate() {
        read(entries_lba + i as u64, chunk).ok()?;
    }
    if crc32(&array[..bytes]) != entries_crc {
        return None;
    }
    let mut parts = Vec::new();
    for i in 0..count as usize {
        let e = &array[i * entry_size..(i + 1) * entry_size];
        if e[0..16].iter().all(|&b| b == 0) {
            continue; // unused entry
        }
        let (first, last) = (le64(e, 32), le64(e, 40));
        if first < first_usable || last > last_usable || last < first {
            continue;
        }
        let sectors = last - first + 1;
        if fits(capacity, first, sectors) {
            parts.push(Partition {
                number: i as u32 + 1,
                start: first,
                sectors,
            });
        }
    }
    Some(parts)
}
