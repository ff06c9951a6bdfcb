//! The CMOS real-time clock: read once at boot for the wall-clock time.

use super::cpu::{inb, outb};

fn reg(index: u8) -> u8 {
    outb(0x70, index);
    inb(0x71)
}

fn bcd(v: u8, binary: bool) -> u64 {
    if binary {
        u64::from(v)
    } else {
        u64::from((v & 0x0f) + (v >> 4) * 10)
    }
}

/// Seconds since the Unix epoch according to the RTC (assumed UTC).
pub fn read_unix_time() -> u64 {
    while reg(0x0a) & 0x80 != 0 {
        core::hint::spin_loop();
    }
    let status_b = reg(0x0b);
    let binary = status_b & 0x04 != 0;
    let sec = bcd(reg(0x00), binary);
    let min = bcd(reg(0x02), binary);
    let hour_raw = reg(0x04);
    let mut hour = bcd(hour_raw & 0x7f, binary);
    if status_b & 0x02 == 0 && hour_raw & 0x80 != 0 {
        hour = (hour + 12) % 24;
    }
    let day = bcd(reg(0x07), binary);
    let month = bcd(reg(0x08), binary);
    let year = 2000 + bcd(reg(0x09), binary);
    days_from_civil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's
/// well-known civil-from-days algorithm, reimplemented).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d.saturating_sub(1);
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).saturating_sub(719_468)
}
