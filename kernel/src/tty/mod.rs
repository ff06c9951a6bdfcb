//! Terminals: the line discipline (ldisc.rs), what every terminal shares
//! (terminal.rs: the discipline, the job-control owner, the window size,
//! the output queue), job control (job.rs), the terminal ioctls
//! (ioctl.rs), the settings user space sees (termios.rs), and the two
//! drivers: the serial console (console.rs) and pseudo-terminals (pty.rs).
//!
//! The VFS reaches a terminal through its device numbers (fs/devices.rs)
//! and devpts (fs/devpts.rs); a terminal reaches user space through the
//! VFS's `FileOps` streams.

pub mod console;
pub mod ioctl;
pub mod job;
pub mod ldisc;
pub mod pty;
pub mod terminal;
pub mod termios;
