//! The integration tests of `corpus`, in one test binary (one binary per crate links once
//! instead of once per file: ripgrep's habit).

mod common;
mod doc_links;
mod file_access;
mod import_circles;
