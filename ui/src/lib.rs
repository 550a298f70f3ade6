//! The dashboard: arrives with the dashboard issue.
