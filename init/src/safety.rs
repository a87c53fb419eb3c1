//! The write interlock. `WritePermit` is the only way to open a target for
//! writing; it is granted only for a target the validated plan names as
//! writable (path, serial or WWN) with the confirmation phrase, and only if
//! the target carries no partition table, filesystem, md superblock or LUKS
//! header, unless overwriting signatures is allowed too.
