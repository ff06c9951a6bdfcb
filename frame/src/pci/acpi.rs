//! Just enough ACPI to find the PCI configuration window: the RSDP (from
//! the PVH start info, else the BIOS area scan), the RSDT/XSDT, and the
//! MCFG table. Tables are copied out of firmware memory only
//! (never RAM the allocator manages), with every length bounded.

use crate::mm::{PAGE_SIZE, Paddr, paddr_to_ptr};

/// Copies firmware memory `[pa, pa + buf.len())` into `buf` if the range
/// lies below 4 GiB and outside the RAM the allocator hands out (the first
/// MiB, which frame reserves, or a non-usable region of the memory map).
fn firmware_read(pa: Paddr, buf: &mut [u8]) -> bool {
    let Some(end) = pa.checked_add(buf.len()) else {
        return false;
    };
    if end > 1 << 32 {
        return false;
    }
    let in_usable_ram = crate::boot::memory_regions()
        .iter()
        .filter(|r| r.usable)
        .any(|r| pa < r.end && r.start < end);
    if end > 0x10_0000 && in_usable_ram {
        return false;
    }
    // Page by page: each chunk is contiguous in the direct map.
    let mut done = 0;
    while done < buf.len() {
        let at = pa + done;
        let n = (PAGE_SIZE - at % PAGE_SIZE).min(buf.len() - done);
        // SAFETY: `at..at + n` is below 4 GiB, so the direct map covers it,
        // and lies in one page of firmware memory (the reserved first MiB
        // or a non-usable region of the memory map, checked above) that no
        // Rust object lives in and nothing writes while frame boots; `buf`
        // is a distinct, writable byte buffer of at least `done + n` bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(paddr_to_ptr::<u8>(at), buf[done..].as_mut_ptr(), n)
        };
        done += n;
    }
    true
}

fn checksum_ok(bytes: &[u8]) -> bool {
    bytes.iter().fold(0u8, |s, b| s.wrapping_add(*b)) == 0
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The RSDP: the address in the PVH start info, else a scan of the BIOS
/// area 0xe0000..0x100000 on 16-byte boundaries (where SeaBIOS puts it).
fn find_rsdp() -> Option<[u8; 36]> {
    let valid = |r: &[u8; 36]| {
        &r[..8] == b"RSD PTR "
            && checksum_ok(&r[..20])
            && (r[15] < 2 || (u32_at(r, 20) as usize >= 36 && checksum_ok(&r[..36])))
    };
    let mut r = [0u8; 36];
    if let Some(pa) = crate::boot::rsdp_paddr()
        && firmware_read(pa, &mut r)
        && valid(&r)
    {
        return Some(r);
    }
    let mut page = [0u8; PAGE_SIZE];
    for base in (0xe_0000..0x10_0000).step_by(PAGE_SIZE) {
        if !firmware_read(base, &mut page) {
            return None;
        }
        for off in (0..PAGE_SIZE - 36).step_by(16) {
            r.copy_from_slice(&page[off..off + 36]);
            if valid(&r) {
                return Some(r);
            }
        }
    }
    None
}

/// Reads the header of the table at `pa`: (signature, length).
fn table_header(pa: Paddr) -> Option<([u8; 4], usize)> {
    let mut h = [0u8; 36];
    firmware_read(pa, &mut h).then(|| (h[..4].try_into().unwrap(), u32_at(&h, 4) as usize))
}

/// Reads a whole table (at most 64 KiB) if its checksum is right.
fn read_table(pa: Paddr, max: usize) -> Option<alloc::vec::Vec<u8>> {
    let (_, len) = table_header(pa)?;
    if !(36..=max).contains(&len) {
        return None;
    }
    let mut t = alloc::vec![0u8; len];
    (firmware_read(pa, &mut t) && checksum_ok(&t)).then_some(t)
}

/// The first MCFG entry for segment 0: (ECAM base, start bus, end bus).
pub(crate) fn find_mcfg() -> Option<(Paddr, u8, u8)> {
    let rsdp = find_rsdp()?;
    let (root, entry_size) = if rsdp[15] >= 2 && u64_at(&rsdp, 24) != 0 {
        (u64_at(&rsdp, 24) as Paddr, 8)
    } else {
        (u32_at(&rsdp, 16) as Paddr, 4)
    };
    let root_table = read_table(root, 64 * 1024)?;
    for at in (36..root_table.len()).step_by(entry_size) {
        if at + entry_size > root_table.len() {
            break;
        }
        let pa = if entry_size == 8 {
            u64_at(&root_table, at) as Paddr
        } else {
            u32_at(&root_table, at) as Paddr
        };
        if table_header(pa).is_none_or(|(sig, _)| &sig != b"MCFG") {
            continue;
        }
        let mcfg = read_table(pa, 64 * 1024)?;
        return parse_mcfg(&mcfg);
    }
    None
}

/// The first usable segment-0 entry of an MCFG table.
pub(crate) fn parse_mcfg(mcfg: &[u8]) -> Option<(Paddr, u8, u8)> {
    for at in (44..mcfg.len()).step_by(16) {
        let e = mcfg.get(at..at + 16)?;
        let base = u64_at(e, 0);
        let segment = u16::from_le_bytes([e[8], e[9]]);
        let (start, end) = (e[10], e[11]);
        if segment == 0 && start <= end && base != 0 && base.is_multiple_of(1 << 20) {
            return Some((usize::try_from(base).ok()?, start, end));
        }
    }
    None
}
