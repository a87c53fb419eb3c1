//! bootbench-image: builds bootbench's initramfs (contract A) and its bootable USB stick image
//! (contract B) as plain files, with no root, no loop mounts and no host depmod.
#![deny(unsafe_code)]

pub mod cpio;
mod fatfix;
pub mod gpt;
pub mod initramfs;
pub mod modinfo;
pub mod modset;
pub mod netboot;
pub mod stick;
pub mod usb;

