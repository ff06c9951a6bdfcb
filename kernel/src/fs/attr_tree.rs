//! Attribute trees, the shape of /sys/block and /sys/class/net: read-only
//! directories whose entries are computed each time they are listed or
//! looked up, holding subdirectories and attribute files whose text is
//! computed when the file is read (not when it is found).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::inode::{FileType, Inode};
use super::pseudo::{Attr, DirSource, FIRST_KEY, GenDir, GenFile, Item, tree_ino};
use crate::error::{Errno, Error, Result};

/// One directory of a tree: what it holds, and how its attributes read.
pub trait AttrNode: Clone + Send + Sync + 'static {
    /// The entries, in listing order: a subdirectory (`Some`) or an
    /// attribute file (`None`) per name.
    fn entries(&self) -> Vec<(String, Option<Self>)>;
    /// The text of attribute `name`, read now (ENODEV once the object is
    /// gone, as Linux's sysfs gives for a removed device).
    fn read_attr(&self, name: &str) -> Result<Vec<u8>>;
}

/// The tree's root directory (mode 0755, root-owned), under `parent`.
pub fn root<N: AttrNode>(dev: u64, ino: u64, parent: Arc<dyn Inode>, node: N) -> Arc<dyn Inode> {
    GenDir::new(
        Attr::root_owned(dev, ino, 0o755),
        Dir {
            dev,
            ino,
            parent,
            node,
        },
    )
}

struct Dir<N> {
    dev: u64,
    ino: u64,
    parent: Arc<dyn Inode>,
    node: N,
}

impl<N: AttrNode> DirSource for Dir<N> {
    fn list(&self) -> Result<Vec<Item>> {
        Ok(self
            .node
            .entries()
            .into_iter()
            .zip(FIRST_KEY..)
            .map(|((name, sub), key)| Item {
                key,
                ino: tree_ino(self.ino, &name),
                file_type: if sub.is_some() {
                    FileType::Directory
                } else {
                    FileType::Regular
                },
                name,
            })
            .collect())
    }

    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let ino = tree_ino(self.ino, name);
        let (_, sub) = self
            .node
            .entries()
            .into_iter()
            .find(|(n, _)| n == name)
            .ok_or(Error::new(Errno::ENOENT))?;
        Ok(match sub {
            Some(node) => GenDir::new(
                Attr::root_owned(self.dev, ino, 0o755),
                Dir {
                    dev: self.dev,
                    ino,
                    parent: this.clone(),
                    node,
                },
            ),
            None => {
                let (node, name) = (self.node.clone(), String::from(name));
                GenFile::new(
                    Attr::root_owned(self.dev, ino, 0o444),
                    Box::new(move || node.read_attr(&name)),
                )
            }
        })
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}
