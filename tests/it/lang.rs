//! Parser and diagnostics tests.
