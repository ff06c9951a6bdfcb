//! Terminal settings as user space sees them (asm-generic/termbits.h,
//! ioctl_tty(2)).

use core::mem::size_of;

frame::pod_struct! {
    /// The kernel's `struct termios` (what TCGETS/TCSETS copy).
    #[derive(Debug, PartialEq, Eq)]
    pub struct Termios {
        pub c_iflag: u32,
        pub c_oflag: u32,
        pub c_cflag: u32,
        pub c_lflag: u32,
        pub c_line: u8,
        pub c_cc: [u8; 19],
    }
}
const _: () = assert!(size_of::<Termios>() == 36);

frame::pod_struct! {
    #[derive(Debug, PartialEq, Eq)]
    pub struct WinSize {
        pub ws_row: u16,
        pub ws_col: u16,
        pub ws_xpixel: u16,
        pub ws_ypixel: u16,
    }
}
const _: () = assert!(size_of::<WinSize>() == 8);

// c_iflag
pub const ISTRIP: u32 = 0o40;
pub const INLCR: u32 = 0o100;
pub const IGNCR: u32 = 0o200;
pub const ICRNL: u32 = 0o400;
pub const IXON: u32 = 0o2000;
// c_oflag
pub const OPOST: u32 = 0o1;
pub const OLCUC: u32 = 0o2;
pub const ONLCR: u32 = 0o4;
pub const OCRNL: u32 = 0o10;
pub const ONLRET: u32 = 0o40;
// c_cflag
pub const B38400: u32 = 0o17;
pub const CS8: u32 = 0o60;
pub const CREAD: u32 = 0o200;
pub const HUPCL: u32 = 0o2000;
// c_lflag
pub const ISIG: u32 = 0o1;
pub const ICANON: u32 = 0o2;
pub const ECHO: u32 = 0o10;
pub const ECHOE: u32 = 0o20;
pub const ECHOK: u32 = 0o40;
pub const ECHONL: u32 = 0o100;
pub const NOFLSH: u32 = 0o200;
pub const TOSTOP: u32 = 0o400;
pub const ECHOCTL: u32 = 0o1000;
pub const ECHOKE: u32 = 0o4000;
pub const IEXTEN: u32 = 0o100000;

// c_cc indices
pub const VINTR: usize = 0;
pub const VQUIT: usize = 1;
pub const VERASE: usize = 2;
pub const VKILL: usize = 3;
pub const VEOF: usize = 4;
pub const VTIME: usize = 5;
pub const VMIN: usize = 6;
pub const VSTART: usize = 8;
pub const VSTOP: usize = 9;
pub const VSUSP: usize = 10;
pub const VEOL: usize = 11;
pub const VREPRINT: usize = 12;
pub const VWERASE: usize = 14;
pub const VLNEXT: usize = 15;
pub const VEOL2: usize = 16;

// ioctl requests
pub const TCGETS: u32 = 0x5401;
pub const TCSETS: u32 = 0x5402;
pub const TCSETSW: u32 = 0x5403;
pub const TCSETSF: u32 = 0x5404;
/// The old System V `struct termio` calls (see [`Termio`]).
pub const TCGETA: u32 = 0x5405;
pub const TCSETA: u32 = 0x5406;
pub const TCSETAW: u32 = 0x5407;
pub const TCSETAF: u32 = 0x5408;
pub const TCSBRK: u32 = 0x5409;
pub const TCXONC: u32 = 0x540A;
pub const TCFLSH: u32 = 0x540B;
pub const TIOCSCTTY: u32 = 0x540E;
pub const TIOCGPGRP: u32 = 0x540F;
pub const TIOCSPGRP: u32 = 0x5410;
pub const TIOCOUTQ: u32 = 0x5411;
pub const TIOCSTI: u32 = 0x5412;
pub const TIOCGWINSZ: u32 = 0x5413;
pub const TIOCSWINSZ: u32 = 0x5414;
pub const FIONREAD: u32 = 0x541B;
pub const TIOCNOTTY: u32 = 0x5422;
pub const TIOCSETD: u32 = 0x5423;
pub const TIOCGETD: u32 = 0x5424;
pub const TCSBRKP: u32 = 0x5425;
pub const TIOCGSID: u32 = 0x5429;
// pty master ioctls (pty(7), ioctl_tty(2))
pub const TIOCGPTN: u32 = 0x8004_5430;
pub const TIOCSPTLCK: u32 = 0x4004_5431;
pub const TIOCSIG: u32 = 0x4004_5436;
pub const TIOCGPTLCK: u32 = 0x8004_5439;
pub const TIOCGPTPEER: u32 = 0x5441;

impl Termios {
    /// Linux's settings for a new terminal (`tty_std_termios` with the
    /// `INIT_C_CC` control characters): the serial console's, and a pty
    /// slave's but for HUPCL.
    pub const fn serial_console() -> Termios {
        let mut c_cc = [0u8; 19];
        c_cc[VINTR] = 0x03; // ^C
        c_cc[VQUIT] = 0x1c; // ^\
        c_cc[VERASE] = 0x7f; // DEL
        c_cc[VKILL] = 0x15; // ^U
        c_cc[VEOF] = 0x04; // ^D
        c_cc[VMIN] = 1;
        c_cc[VSTART] = 0x11; // ^Q
        c_cc[VSTOP] = 0x13; // ^S
        c_cc[VSUSP] = 0x1a; // ^Z
        c_cc[VREPRINT] = 0x12; // ^R
        c_cc[13] = 0x0f; // VDISCARD ^O
        c_cc[VWERASE] = 0x17; // ^W
        c_cc[VLNEXT] = 0x16; // ^V
        Termios {
            c_iflag: ICRNL | IXON,
            c_oflag: OPOST | ONLCR,
            c_cflag: B38400 | CS8 | CREAD | HUPCL,
            c_lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
            c_line: 0,
            c_cc,
        }
    }

    /// A new pty slave's settings (Linux's pts driver: `tty_std_termios`
    /// without HUPCL).
    pub const fn pty_slave() -> Termios {
        let mut t = Termios::serial_console();
        t.c_cflag &= !HUPCL;
        t
    }
}

/// The old `struct termio` (TCGETA/TCSETA*): 16-bit flags, the line
/// discipline and the first NCC (8) control characters, 18 bytes with
/// the trailing padding. Setting one replaces only the low 16 bits of
/// each flag word and those 8 characters (Linux's
/// user_termio_to_kernel_termios).
pub struct Termio;

impl Termio {
    pub const SIZE: usize = 18;
    const NCC: usize = 8;

    /// `t` as a termio.
    pub fn encode(t: &Termios) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        for (i, flag) in [t.c_iflag, t.c_oflag, t.c_cflag, t.c_lflag].into_iter().enumerate() {
            b[2 * i..2 * i + 2].copy_from_slice(&(flag as u16).to_ne_bytes());
        }
        b[8] = t.c_line;
        b[9..9 + Self::NCC].copy_from_slice(&t.c_cc[..Self::NCC]);
        b
    }

    /// `t` with the settings of termio `b` applied.
    pub fn apply(t: &Termios, b: &[u8; Self::SIZE]) -> Termios {
        let low = |i: usize| u32::from(u16::from_ne_bytes([b[2 * i], b[2 * i + 1]]));
        let mut n = *t;
        n.c_iflag = (t.c_iflag & 0xffff_0000) | low(0);
        n.c_oflag = (t.c_oflag & 0xffff_0000) | low(1);
        n.c_cflag = (t.c_cflag & 0xffff_0000) | low(2);
        n.c_lflag = (t.c_lflag & 0xffff_0000) | low(3);
        n.c_line = b[8];
        n.c_cc[..Self::NCC].copy_from_slice(&b[9..9 + Self::NCC]);
        n
    }
}
