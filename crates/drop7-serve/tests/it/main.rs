//! The integration tests of `drop7-serve`, in one test binary (one binary per crate links
//! once instead of once per file: ripgrep's habit).

mod api;
