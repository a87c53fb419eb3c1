//! What the system tells of a target (sysfs, ioctls) and of the host.
//!
//! API used by the CLI:
//! - `describe(path: &str) -> Result<TargetInfo, IdentityError>`
//! - `host() -> Host`
