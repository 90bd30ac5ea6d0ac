//! Shared support code for the end-to-end suites in `tests/`.
