//! The console terminal (/dev/console, /dev/tty, and fds 0-2 of init) on
//! the serial port, with a small line discipline (termios(3)):
//!
//! - canonical mode (ICANON): input is edited a line at a time — DEL/BS
//!   erase a character, ^U the line, ^W a word — and a read returns at most
//!   one line; ^D at the start of a line is end of file;
//! - non-canonical mode: a read returns whatever bytes have arrived;
//! - ECHO, ICRNL/INLCR/IGNCR on input, OPOST|ONLCR ("\n" → "\r\n") on output;
//! - ISIG: ^C, ^\ and ^Z go to the foreground process group through the
//!   hooks the process layer registers ([`set_hooks`]).
//!
//! The UART is polled while a reader waits: the reader sleeps 10 ms between
//! polls so the CPU idles. Locking: the terminal state is one `CONSOLE`-level
//! spin lock, never held while sleeping or while signalling.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;

use frame::pod::Pod;
use frame::sync::{Once, SpinLock, WaitQueue, level};

use super::stream::{Caller, FileOps, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
use super::termios::*;
use crate::error::{Errno, Error, Result};

/// Longest input line kept (Linux's N_TTY_BUF_SIZE); more is dropped.
const MAX_INPUT: usize = 4096;
const SIGINT: u32 = 2;
const SIGQUIT: u32 = 3;
const SIGTSTP: u32 = 20;

static CONSOLE: Once<Arc<Console>> = Once::new();
static INPUT_WAIT: WaitQueue = WaitQueue::new();

pub struct Console {
    tty: SpinLock<Tty, { level::CONSOLE }>,
}

struct Tty {
    termios: Termios,
    winsize: WinSize,
    /// Foreground process group, 0 until set.
    fg_pgrp: u32,
    /// The line being edited (canonical mode).
    line: Vec<u8>,
    /// Finished lines for readers; an empty one is an end of file.
    lines: VecDeque<Vec<u8>>,
    /// Bytes for readers in non-canonical mode.
    raw: VecDeque<u8>,
    /// A signal for the foreground group, sent once the lock is released.
    pending_signal: Option<u32>,
}

impl Console {
    /// The console device (shared by every open console file).
    pub fn get() -> Arc<Console> {
        CONSOLE
            .call_once(|| {
                Arc::new(Console {
                    tty: SpinLock::new(Tty {
                        termios: Termios::serial_console(),
                        winsize: WinSize {
                            ws_row: 24,
                            ws_col: 80,
                            ws_xpixel: 0,
                            ws_ypixel: 0,
                        },
                        fg_pgrp: 0,
                        line: Vec::new(),
                        lines: VecDeque::new(),
                        raw: VecDeque::new(),
                        pending_signal: None,
                    }),
                })
            })
            .clone()
    }
}

impl FileOps for Console {
    fn read(&self, buf: &mut [u8], caller: &dyn Caller) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let (n, signal, never_block) = {
            let mut tty = self.tty.lock();
            tty.poll_input();
            let n = tty.take_input(buf);
            // Non-canonical reads with VMIN = 0 return at once even without
            // input (termios(3), "MIN == 0"; VTIME is not implemented).
            let t = &tty.termios;
            let never_block = t.c_lflag & ICANON == 0 && t.c_cc[VMIN] == 0;
            (
                n,
                tty.pending_signal.take().map(|s| (tty.fg_pgrp, s)),
                never_block,
            )
        };
        if let Some((pgrp, signo)) = signal {
            caller.signal_group(if pgrp == 0 { caller.pgid() } else { pgrp }, signo);
        }
        match n {
            Some(n) => Ok(n),
            None if never_block => Ok(0),
            None => Err(Error::new(Errno::EAGAIN)),
        }
    }

    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        let oflag = self.tty.lock().termios.c_oflag;
        write_output(oflag, buf);
        Ok(buf.len())
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        let mut tty = self.tty.lock();
        tty.poll_input();
        let readable = !tty.lines.is_empty() || !tty.raw.is_empty() || tty.pending_signal.is_some();
        let input = if readable { POLLIN | POLLRDNORM } else { 0 };
        input | POLLOUT | POLLWRNORM
    }

    fn wait_queue(&self) -> &WaitQueue {
        &INPUT_WAIT
    }

    fn ioctl(&self, cmd: u32, arg: u64, user: &dyn Caller) -> Result<isize> {
        match cmd {
            TCGETS => {
                let t = self.tty.lock().termios;
                user.write_bytes(arg, t.as_bytes())?;
            }
            TCSETS | TCSETSW | TCSETSF => {
                let mut t = Termios::new_zeroed();
                user.read_bytes(arg, t.as_bytes_mut())?;
                let mut tty = self.tty.lock();
                if cmd == TCSETSF {
                    tty.flush_input();
                }
                tty.set_termios(t);
            }
            TIOCGWINSZ => {
                let w = self.tty.lock().winsize;
                user.write_bytes(arg, w.as_bytes())?;
            }
            TIOCSWINSZ => {
                let mut w = WinSize::new_zeroed();
                user.read_bytes(arg, w.as_bytes_mut())?;
                self.tty.lock().winsize = w;
            }
            TIOCGPGRP => {
                let pgrp = self.tty.lock().fg_pgrp;
                let pgrp = if pgrp == 0 { user.pgid() } else { pgrp };
                user.write_bytes(arg, &pgrp.to_ne_bytes())?;
            }
            TIOCSPGRP => {
                let mut b = [0u8; 4];
                user.read_bytes(arg, &mut b)?;
                let pgrp = i32::from_ne_bytes(b);
                let pgrp = u32::try_from(pgrp).map_err(|_| Error::new(Errno::EINVAL))?;
                self.tty.lock().fg_pgrp = pgrp;
            }
            TIOCGSID => user.write_bytes(arg, &user.sid().to_ne_bytes())?,
            FIONREAD => {
                let n = {
                    let mut tty = self.tty.lock();
                    tty.poll_input();
                    tty.lines.iter().map(Vec::len).sum::<usize>() + tty.raw.len()
                };
                user.write_bytes(arg, &(n as i32).to_ne_bytes())?;
            }
            TIOCOUTQ => user.write_bytes(arg, &0i32.to_ne_bytes())?,
            TCFLSH => match arg {
                0 | 2 => self.tty.lock().flush_input(),
                1 => {}
                _ => return Err(Error::new(Errno::EINVAL)),
            },
            TIOCSCTTY | TIOCNOTTY | TCSBRK | TCSBRKP | TCXONC => {}
            _ => return Err(Error::new(Errno::ENOTTY)),
        }
        Ok(0)
    }
}

/// Writes to the serial port with output processing (OPOST|ONLCR).
fn write_output(oflag: u32, bytes: &[u8]) {
    if oflag & OPOST == 0 || oflag & ONLCR == 0 {
        frame::console::write_bytes(bytes);
        return;
    }
    for (i, piece) in bytes.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            frame::console::write_bytes(b"\r\n");
        }
        frame::console::write_bytes(piece);
    }
}

impl Tty {
    fn poll_input(&mut self) {
        while let Some(b) = frame::console::try_read_byte() {
            self.input(b);
        }
    }

    fn lflag(&self, flag: u32) -> bool {
        self.termios.c_lflag & flag != 0
    }

    fn set_termios(&mut self, t: Termios) {
        let was_canonical = self.lflag(ICANON);
        self.termios = t;
        if was_canonical && !self.lflag(ICANON) {
            // What was typed so far becomes readable (n_tty_set_termios).
            let line = core::mem::take(&mut self.line);
            for l in core::mem::take(&mut self.lines) {
                self.raw.extend(l);
            }
            self.raw.extend(line);
        }
    }

    fn flush_input(&mut self) {
        self.line.clear();
        self.lines.clear();
        self.raw.clear();
    }

    /// Moves input for a reader into `buf`: one line in canonical mode (0
    /// bytes at end of file), or what non-canonical input there is.
    fn take_input(&mut self, buf: &mut [u8]) -> Option<usize> {
        if let Some(mut line) = self.lines.pop_front() {
            let n = buf.len().min(line.len());
            buf[..n].copy_from_slice(&line[..n]);
            if n < line.len() {
                line.drain(..n);
                self.lines.push_front(line);
            }
            return Some(n);
        }
        if self.raw.is_empty() {
            return None;
        }
        let n = buf.len().min(self.raw.len());
        for (dst, src) in buf.iter_mut().zip(self.raw.drain(..n)) {
            *dst = src;
        }
        Some(n)
    }

    fn echo(&self, c: u8) {
        if !self.lflag(ECHO) {
            return;
        }
        if self.lflag(ECHOCTL) && (c < 0x20 && c != b'\n' && c != b'\t' || c == 0x7f) {
            frame::console::write_bytes(&[b'^', c ^ 0x40]);
        } else {
            write_output(self.termios.c_oflag, &[c]);
        }
    }

    /// Erases the last character of the line and its echo.
    fn erase_char(&mut self) -> bool {
        let Some(c) = self.line.pop() else {
            return false;
        };
        if self.lflag(ECHO) && self.lflag(ECHOE) {
            let wide = self.lflag(ECHOCTL) && (c < 0x20 && c != b'\t' || c == 0x7f);
            let cols = if wide { 2 } else { 1 };
            for _ in 0..cols {
                frame::console::write_bytes(b"\x08 \x08");
            }
        }
        true
    }

    /// Handles one input byte.
    fn input(&mut self, byte: u8) {
        let iflag = self.termios.c_iflag;
        let cc = self.termios.c_cc;
        let mut c = if iflag & ISTRIP != 0 {
            byte & 0x7f
        } else {
            byte
        };
        if c == b'\r' {
            if iflag & IGNCR != 0 {
                return;
            }
            if iflag & ICRNL != 0 {
                c = b'\n';
            }
        } else if c == b'\n' && iflag & INLCR != 0 {
            c = b'\r';
        }
        if self.lflag(ISIG) {
            let signo = match c {
                _ if c == cc[VINTR] && c != 0 => Some(SIGINT),
                _ if c == cc[VQUIT] && c != 0 => Some(SIGQUIT),
                _ if c == cc[VSUSP] && c != 0 => Some(SIGTSTP),
                _ => None,
            };
            if let Some(signo) = signo {
                self.echo(c);
                if !self.lflag(NOFLSH) {
                    self.flush_input();
                }
                self.pending_signal = Some(signo);
                return;
            }
        }
        if !self.lflag(ICANON) {
            if self.raw.len() < MAX_INPUT {
                self.raw.push_back(c);
                self.echo(c);
            }
            return;
        }
        if c == cc[VERASE] || c == 0x08 {
            self.erase_char();
        } else if c == cc[VKILL] {
            while self.erase_char() {}
        } else if c == cc[VWERASE] && self.lflag(IEXTEN) {
            while self.line.last().is_some_and(|b| *b == b' ') && self.erase_char() {}
            while self.line.last().is_some_and(|b| *b != b' ') && self.erase_char() {}
        } else if c == cc[VEOF] {
            // End of line without a newline; an empty one reads as EOF.
            let line = core::mem::take(&mut self.line);
            self.lines.push_back(line);
        } else if c == b'\n' || (c != 0 && (c == cc[VEOL] || c == cc[VEOL2])) {
            self.line.push(c);
            if c == b'\n' && self.lflag(ECHONL) && !self.lflag(ECHO) {
                write_output(self.termios.c_oflag, b"\n");
            }
            self.echo(c);
            let line = core::mem::take(&mut self.line);
            self.lines.push_back(line);
        } else if self.line.len() < MAX_INPUT - 1 {
            self.line.push(c);
            self.echo(c);
        }
    }
}
