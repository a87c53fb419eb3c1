//! The config file, its validation, and the plan it becomes.
