//! `provetop fleet ADDR…`: every rig on one screen, from each rig's summary stream
//! (`provetop.v1.Fleet`) rather than its full history.

pub mod config;
