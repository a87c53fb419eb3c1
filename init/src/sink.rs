//! Where results go: a file written atomically (temp file, fsync, rename,
//! never overwriting), or stdout.
